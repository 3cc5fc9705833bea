import DeviceLogs
import Foundation
import NATSClient
import Replication
import VirtualTourist

/// A new device of a map made from the cluster alone (`vt clone --from nats://… --stream
/// VT_<device>`, docs/SYNC.md, "A new device from the cluster"): no store folder of the map is
/// needed, only its URL and one device's stream. The new store is a device of the map with
/// nothing of its own yet (``DeviceClone/emptyDevice(of:at:name:taken:configuration:fileSystem:)``),
/// which then syncs once: every device's log comes from its stream as a copy, and every photo the
/// merged state keeps (shown, or kept for time travel's retention window) from the buckets. Its
/// own stream is made by that first sync, so the other devices find it.
public enum DeviceJoin {
    public struct Report: Sendable {
        public var device: DeviceFile
        /// How the sync stood when the join was done.
        public var status: SyncStatus
        /// Events the new store folds.
        public var events: UInt64
        /// Photos it holds.
        public var photos: Int
    }

    /// - Throws: ``ReplicationError`` `.invalid` for a folder that exists and is not empty, a bad
    ///   name, a stream the cluster does not have (or whose bucket names no map and whose name is
    ///   no device's); the cluster's errors, waited through for
    ///   ``SyncOptions/patience``; the store's. A join cut short leaves a device of the map that
    ///   the next `vt sync --with` finishes; one that fails before the device is made leaves nothing.
    public static func join(
        connection: NATSConnection, stream: ReplicationStream, folder: String, name: String?, servers: String,
        storeOptions: StoreOptions = StoreOptions(), syncOptions: SyncOptions = SyncOptions(),
        progress: (@Sendable (String) -> Void)? = nil
    ) async throws -> Report {
        if let name, let problem = DeviceFile.problem(withName: name) { throw ReplicationError.invalid(problem) }
        let found = try await devices(of: stream, jetStream: JetStream(connection), patience: syncOptions.patience)
        progress?("making \(folder) a new device of map \(found.map.short), which has \(found.devices.count) device(s)")
        let device: DeviceFile
        do {
            device = try DeviceClone.emptyDevice(
                of: found.map, at: folder, name: name, taken: [], knowing: found.devices, configuration: storeOptions.log)
        } catch {
            throw ReplicationError.invalid("cannot make the new device at \(folder): \(error)")
        }
        var options = storeOptions
        options.createIfMissing = false
        let store = try await TouristStore.open(at: folder, options: options)
        do {
            let sync = try await ClusterSync.start(store: store, connection: connection, servers: servers, options: syncOptions)
            let status = try await sync.syncOnce(progress: progress)
            let report = Report(device: device, status: status, events: store.lastSequence, photos: try store.blobs.storedBlobs().count)
            try await store.close()
            return report
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// The map of `stream` and its devices, as its bucket names them; for the stream of a store of
    /// one device (whose bucket names nothing: it ships as it did before there were several), the
    /// device its name gives, whose map is its own id as such a store's is.
    private static func devices(
        of stream: ReplicationStream, jetStream: JetStream, patience: Duration
    ) async throws -> (map: DeviceID, devices: [DeviceFile]) {
        if let found = try await MapFollower.mapDevices(of: stream, jetStream: jetStream, patience: patience) {
            let others = found.devices.filter { $0 != found.file.device }.map { DeviceFile(map: found.file.map, device: $0, name: nil) }
            return (found.file.map, [found.file] + others)
        }
        guard stream.name.hasPrefix("VT_"), let device = DeviceID(parsing: String(stream.name.dropFirst(3))) else {
            throw ReplicationError.invalid("the stream \(stream.name) is no device's (a device's stream is VT_ and its id), and its bucket names no map")
        }
        let last: UInt64?
        do { last = try await DeviceStreamReader.lastEvent(jetStream: jetStream, device: device) } catch {
            throw ReplicationError.cluster("cannot read the stream \(stream.name): \(error)")
        }
        guard last != nil else {
            throw ReplicationError.invalid("the cluster has no stream \(stream.name) with events, and no bucket that names its map")
        }
        return (device, [DeviceFile(map: device, device: device, name: nil)])
    }
}
