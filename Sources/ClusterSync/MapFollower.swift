import DeviceLogs
import EventLog
import FileIO
import Foundation
import NATSClient
import Replication
import VirtualTourist

/// A read-only replica of a map of several devices, kept live from the cluster (docs/SYNC.md,
/// "Following a map"): what `vt follow` of one device's stream becomes once its map has more
/// than one device. A replica of one log (``Follower``) would show that device's actions without
/// the others'; this one is a device of the map that never writes: its own log stays empty, and
/// every device's log is a copy, taken from its stream as a sync takes it (``ClusterSync``, with
/// nothing shipped), so it folds the merged history every device folds. It is nowhere in the
/// cluster: it has no stream, and no bucket names it.
///
/// ```swift
/// let follower = try await MapFollower.start(connection: nats, stream: stream, folder: "/replica", servers: url)
/// let web = …(store: follower.store)    // the whole map, live, refusing every change
/// try await follower.run()              // until cancelled
/// ```
public final class MapFollower: Sendable {
    public let store: TouristStore
    public let sync: ClusterSync
    /// The stream it was started from.
    public let stream: ReplicationStream

    /// The map's devices as the bucket of `stream` names them, when there are several (nil: a
    /// store of one device shipped it, which ``Follower`` follows).
    public static func severalDevices(of stream: ReplicationStream, jetStream: JetStream) async throws -> [DeviceID]? {
        guard let found = try await mapDevices(of: stream, jetStream: jetStream, patience: .seconds(90)), found.devices.count > 1 else { return nil }
        return found.devices
    }

    /// What the bucket of `stream` says, asked again through an election for up to `patience`.
    static func mapDevices(
        of stream: ReplicationStream, jetStream: JetStream, patience: Duration
    ) async throws -> (file: DeviceFile, devices: [DeviceID])? {
        let deadline = ContinuousClock.now + patience
        while true {
            do { return try await DeviceStreamReader.mapDevices(jetStream: jetStream, stream: stream) } catch let error
                where DeviceStreamReader.isTransient(error) && ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(250))
            } catch let error as ReplicationError { throw error } catch {
                throw ReplicationError.cluster("cannot read the map's devices in the bucket of \(stream.name): \(error)")
            }
        }
    }

    /// Makes the replica in `folder` when it is new or empty (a device of the map with nothing
    /// of its own), opens it, and takes what every device's stream holds now before it returns,
    /// so that what is served is the whole map; ``run()`` then keeps it live.
    ///
    /// - Throws: ``ReplicationError`` `.invalid` for a stream whose bucket names no map of
    ///   several devices, or a folder that holds another store (a device's own events, another
    ///   map); the cluster's errors (waited through as a sync waits); the store's.
    public static func start(
        connection: NATSConnection, stream: ReplicationStream, folder: String, servers: String,
        storeOptions: StoreOptions = StoreOptions(), syncOptions: SyncOptions = SyncOptions(),
        progress: (@Sendable (String) -> Void)? = nil
    ) async throws -> MapFollower {
        let jetStream = JetStream(connection)
        let found = try await mapDevices(of: stream, jetStream: jetStream, patience: syncOptions.patience)
        guard let found, found.devices.count > 1 else {
            throw ReplicationError.invalid("the bucket of stream \(stream.name) names no map of several devices; a replica of its one log follows it")
        }
        let map = found.file.map
        let isNew = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.isEmpty ?? true
        if isNew {
            progress?("making \(folder) a replica of map \(map.short)'s \(found.devices.count) devices")
            do {
                _ = try DeviceClone.emptyDevice(
                    of: map, at: folder, name: "replica", taken: Set(found.devices), configuration: storeOptions.log)
            } catch {
                throw ReplicationError.invalid("cannot make the replica at \(folder): \(error)")
            }
        }
        try check(folder, isOf: map, following: stream)
        var options = storeOptions
        options.createIfMissing = false
        options.replicaOf = "map \(map.short), through stream \(stream.name) on \(servers)"
        options.replicaTakesOtherDevices = true
        let store = try await TouristStore.open(at: folder, options: options)
        do {
            let sync = try await ClusterSync.follow(
                store: store, connection: connection, servers: servers, devices: found.devices, options: syncOptions)
            try await sync.syncOnce(progress: progress)
            return MapFollower(store: store, sync: sync, stream: stream)
        } catch {
            try? await store.close()
            throw error
        }
    }

    private init(store: TouristStore, sync: ClusterSync, stream: ReplicationStream) {
        self.store = store
        self.sync = sync
        self.stream = stream
    }

    /// A folder a follower may open: a device of `map` whose own log is empty.
    private static func check(_ folder: String, isOf map: DeviceID, following stream: ReplicationStream) throws {
        let devices: StoreDevices
        do { devices = try StoreSync.devices(of: folder) } catch {
            throw ReplicationError.invalid("the folder \(folder) is not a replica of a map: \(error)")
        }
        guard devices.hasFile, devices.this.map == map else {
            throw ReplicationError.invalid(
                "the store at \(folder) is of map \(devices.this.map.short), and stream \(stream.name) of map \(map.short); follow into a new folder")
        }
        let own = try LogReader(directory: Path.join(folder, "log"), payloadCodec: EventCodec.blockCodec).lastSequence()
        guard own == 0 else {
            throw ReplicationError.invalid(
                "the store at \(folder) is device \(devices.this.device.short), with \(own) events of its own (a replica of one device's log, or a device"
                    + " that writes); a replica of a map of several devices writes nothing of its own: follow into a new folder")
        }
    }

    /// Where it stands (``ClusterSync/status``; nothing to send).
    public var status: SyncStatus { sync.status }

    /// Takes every device's events as they land until cancelled (``ClusterSync/run()``).
    public func run() async throws { try await sync.run() }

    /// Closes the store (cancel ``run()`` first).
    public func close() async throws { try await store.close() }
}
