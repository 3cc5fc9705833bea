import DeviceLogs
import EventLog
import FileIO
import Foundation
import NATSClient
import Synchronization
import VirtualTourist

/// Ships every log a store holds, each into its own device's stream (docs/REPLICATION.md, "A
/// store of several devices"): a store of one device ships its log as ``Replicator`` does; a
/// store of several ships its own log and its copy of each other device's, to `VT_<device id>`,
/// each fenced on its own, with `device.json` and the map's device list in each stream's bucket
/// so that a restore of any device finds the others.
///
/// ```swift
/// let replicator = try await MapReplicator.start(store: "/albums", connection: nats, servers: url)
/// try await replicator.run()           // until cancelled; or shipAvailable() once
/// ```
public final class MapReplicator: Sendable {
    public let storeFolder: String
    let connection: NATSConnection
    let servers: String
    let options: ReplicationOptions
    /// This device's replicator first, then the copies' by device id.
    private let running: Mutex<[Replicator]>

    private init(store: String, connection: NATSConnection, servers: String, options: ReplicationOptions, replicators: [Replicator]) {
        storeFolder = store
        self.connection = connection
        self.servers = servers
        self.options = options
        running = Mutex(replicators)
    }

    /// Starts a replicator for each log the store holds.
    ///
    /// - Throws: ``ReplicationError``, as ``Replicator/start(store:connection:servers:options:)``
    ///   does for any of the logs; `.invalid` for `--stream` with a store of several devices
    ///   (each device's stream is named by its id) or a damaged copy.
    public static func start(
        store folder: String, connection: NATSConnection, servers: String, options: ReplicationOptions = ReplicationOptions()
    ) async throws -> MapReplicator {
        let knowsAnother: Bool
        do { knowsAnother = try StoreDevices.knowsAnother(store: folder) } catch {
            throw ReplicationError.invalid("the store at \(folder) cannot be replicated: \(error)")
        }
        guard knowsAnother else {
            let own = try await Replicator.start(
                store: folder, shipping: ShippedLog(ownLogOf: folder), connection: connection, servers: servers, options: options)
            return MapReplicator(store: folder, connection: connection, servers: servers, options: options, replicators: [own])
        }
        if let stream = options.stream {
            throw ReplicationError.invalid(
                "the store at \(folder) is one of several devices of its map: each device's log goes to its own stream, VT_ and the device's id, so --stream \(stream) cannot name them; leave it out")
        }
        let map = MapReplicator(store: folder, connection: connection, servers: servers, options: options, replicators: [])
        _ = try await map.startNewLogs()
        return map
    }

    /// The replicators, this device's first.
    public var replicators: [Replicator] { running.withLock { $0 } }

    /// The streams shipped to, this device's first.
    public var streams: [ReplicationStream] { replicators.map(\.stream) }

    /// Each stream's status, this device's first.
    public var statuses: [ReplicationStatus] { replicators.map(\.status) }

    /// Where replication stands, all streams summed: `stream` names them all. `localEvents` is
    /// this device's last event (the open store's), as ``Replicator/status(localEvents:)``.
    public func status(localEvents local: UInt64) -> ReplicationStatus {
        let each = replicators.enumerated().map { index, replicator in
            index == 0 ? replicator.status(localEvents: local) : replicator.status(localEvents: 0)
        }
        return Self.sum(each)
    }

    static func sum(_ each: [ReplicationStatus]) -> ReplicationStatus {
        guard var total = each.first else { preconditionFailure("a map replicator ships at least its own log") }
        for status in each.dropFirst() {
            total.stream += ", " + status.stream
            total.localEvents += status.localEvents
            total.acknowledgedEvents += status.acknowledgedEvents
            total.lagEvents += status.lagEvents
            total.photosUploaded += status.photosUploaded
            total.photosPending += status.photosPending
            total.photosMissing += status.photosMissing
            total.connected = total.connected && status.connected
            total.lastError = total.lastError ?? status.lastError.map { "\(status.stream): \($0)" }
            total.rewrite = total.rewrite ?? status.rewrite
            total.acknowledgedAt = [total.acknowledgedAt, status.acknowledgedAt].compactMap { $0 }.max()
        }
        return total
    }

    /// Asks each stream to be rewritten from its log before its next batch.
    public func requestRewrite() throws {
        for replicator in replicators { try replicator.requestRewrite() }
    }

    /// Ships what every log holds now, one log after the other (each retrying the cluster for
    /// up to ``ReplicationOptions/giveUpAfter``); returns each stream's status after.
    @discardableResult
    public func shipAvailable(progress: (@Sendable (ReplicationStatus) -> Void)? = nil) async throws -> [ReplicationStatus] {
        _ = try await startNewLogs()
        var done: [ReplicationStatus] = []
        for replicator in replicators {
            let before = done
            var each: (@Sendable (ReplicationStatus) -> Void)? = nil
            if let progress { each = { status in progress(Self.sum(before + [status])) } }
            done.append(try await replicator.shipAvailable(progress: each))
        }
        return done
    }

    /// Ships every log continuously until the task is cancelled, and starts shipping a device's
    /// log as soon as a sync brings its first copy into the store.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for replicator in replicators { group.addTask { try await replicator.run(); return false } }
            group.addTask { try await self.waitForNewLogs() }
            while let foundNew = try await group.next() {
                guard foundNew, !Task.isCancelled else { continue }
                for replicator in try await startNewLogs() { group.addTask { try await replicator.run(); return false } }
                group.addTask { try await self.waitForNewLogs() }
            }
        }
    }

    /// Waits until the store holds a log no replicator ships yet (true), or the task is
    /// cancelled (false: stopping is no failure, as a replicator's own run returns).
    private func waitForNewLogs() async throws -> Bool {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if Task.isCancelled { break }
            let shipping = Set(replicators.map(\.identity.logIDHex))
            if try Self.logs(of: storeFolder).contains(where: { !shipping.contains($0.device.description) }) { return true }
        }
        return false
    }

    /// Starts a replicator for each log of the store that none ships yet (a store of one device
    /// that became one of several gets its copies' too), and writes each bucket's device
    /// objects; returns the new replicators.
    private func startNewLogs() async throws -> [Replicator] {
        let shipping = Set(replicators.map(\.identity.logIDHex))
        let logs = try Self.logs(of: storeFolder)
        guard logs.count > 1 else { return [] }
        // A store of one device that became one of several: a forget arriving from another
        // device erases this device's events too, without a PlaceForgotten in its own log.
        for replicator in replicators { replicator.rewritesOnEveryForget.store(true, ordering: .relaxed) }
        let devices: StoreDevices
        do { devices = try StoreDevices.read(store: storeFolder, payloadCodec: EventCodec.blockCodec) } catch {
            throw ReplicationError.invalid("the store at \(storeFolder) cannot be replicated: \(error)")
        }
        if let (device, reason) = devices.damaged.first {
            throw ReplicationError.invalid(
                "the copy of device \(device) in \(storeFolder) is damaged (\(reason)); the store must be repaired (vt sync) before it is replicated")
        }
        var started: [Replicator] = []
        for (device, shipped) in logs where !shipping.contains(device.description) {
            started.append(
                try await Replicator.start(store: storeFolder, shipping: shipped, connection: connection, servers: servers, options: options))
        }
        running.withLock { $0 += started }
        let names = Dictionary(uniqueKeysWithValues: devices.copies.map { ($0.id, $0.file?.name) })
        for replicator in replicators {
            let id = try DeviceID(logID: replicator.identity.logID)
            let file = id == devices.this.device ? devices.this : DeviceFile(map: devices.this.map, device: id, name: names[id] ?? nil)
            try await Replicator.clusterCall("write the map's devices into the bucket \(replicator.stream.bucket)") {
                try await BucketDevices(file: file, devices: devices.all + devices.others).write(to: replicator.bucket, stream: replicator.stream)
            }
        }
        return started
    }

    /// The last event of the log a stream of `store` ships: a copy's, for a stream named for
    /// a device the store holds a copy of; the store's own otherwise (0 when it cannot be read).
    public static func localEvents(of store: String, stream: String) -> UInt64 {
        var path = Path.join(store, "log")
        if stream.hasPrefix("VT_"), let device = DeviceID(parsing: String(stream.dropFirst(3))),
            FileManager.default.fileExists(atPath: StoreDevices.logPath(store: store, device: device))
        {
            path = StoreDevices.logPath(store: store, device: device)
        }
        return (try? LogReader(directory: path, payloadCodec: EventCodec.blockCodec).lastSequence()) ?? 0
    }

    /// The logs a store holds, this device's first, then each copy that has one, by device id.
    static func logs(of store: String) throws -> [(device: DeviceID, shipped: ShippedLog)] {
        let own: DeviceID
        let copies: [DeviceID]
        do {
            guard let identity = try LogReader(directory: Path.join(store, "log"), payloadCodec: EventCodec.blockCodec).identity() else {
                throw ReplicationError.invalid("the store at \(store) has no log yet; open it once (vt pins) and replicate then")
            }
            own = try DeviceID(logID: identity.logID)
            let folder = Path.join(store, StoreDevices.folderName)
            let names = FileManager.default.fileExists(atPath: folder) ? try FileManager.default.contentsOfDirectory(atPath: folder) : []
            copies = names.compactMap(DeviceID.init(parsing:)).filter {
                FileManager.default.fileExists(atPath: StoreDevices.logPath(store: store, device: $0))
            }.sorted()
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw ReplicationError.invalid("the store at \(store) cannot be replicated: \(error)")
        }
        return [(own, ShippedLog(path: Path.join(store, "log"), isCopy: false, rewritesOnEveryForget: true))]
            + copies.map { ($0, ShippedLog(path: StoreDevices.logPath(store: store, device: $0), isCopy: true, rewritesOnEveryForget: true)) }
    }
}
