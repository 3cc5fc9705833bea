import BlobStore
import DeviceLogs
import EventLog
import Foundation
import NATSClient
import Replication
import Synchronization
import VirtualTourist

/// Sync of one device's open store through a NATS JetStream cluster (docs/SYNC.md): it ships
/// every log the store holds into its device's stream (``MapReplicator``), finds the map's other
/// devices by the lists in their streams' buckets, and takes each one's new events from its
/// stream as they land (``DeviceStreamReader``), with the photos they name, into the open store
/// (``TouristStore/take(_:from:identity:head:)``), which folds them in by the rules of the merge.
///
/// ```swift
/// let sync = try await ClusterSync.start(store: store, connection: nats, servers: url)
/// try await sync.syncOnce()     // ship, take what the others shipped, ship again; or
/// try await sync.run()          // live, until cancelled
/// ```
public final class ClusterSync: Sendable {
    public let store: TouristStore
    let jetStream: JetStream
    let connection: NATSConnection
    let servers: String
    let options: SyncOptions
    /// Nil for a follower (``follow(store:connection:servers:devices:options:)``): it ships nothing.
    let replicator: MapReplicator?
    let this: DeviceFile
    /// The devices whose buckets are asked first for the map's devices: this one's for a device
    /// that ships, the followed devices' for a follower (which has no stream).
    let seeds: [DeviceID]
    let shared: Mutex<Shared>

    struct Shared {
        var peers: [DeviceID: SyncStatus.Peer] = [:]
        var files: [DeviceID: DeviceFile] = [:]
        var lastContact: Date?
        var lastError: String?
    }

    /// Starts shipping (the streams and buckets are made or found, waiting through an election
    /// as ``MapReplicator`` does). Nothing is taken until ``syncOnce(progress:)`` or ``run()``.
    ///
    /// - Throws: ``ReplicationError`` as ``MapReplicator/start(store:connection:servers:options:)``
    ///   does; `.invalid` for a read-only replica or a stream named by hand (each device's
    ///   stream is named by its id).
    public static func start(
        store: TouristStore, connection: NATSConnection, servers: String, options: SyncOptions = SyncOptions()
    ) async throws -> ClusterSync {
        guard !store.isReplica else {
            throw ReplicationError.invalid("the store at \(store.folder) is a read-only replica; a replica follows its stream, it does not sync")
        }
        guard options.replication.stream == nil else {
            throw ReplicationError.invalid("a sync ships each device's log to the stream named by its id, VT_ and the id: leave --stream out")
        }
        let devices: StoreDevices
        do { devices = try StoreSync.devices(of: store.folder) } catch {
            throw ReplicationError.invalid("the store at \(store.folder) cannot sync: \(error)")
        }
        let replicator = try await MapReplicator.start(
            store: store.folder, connection: connection, servers: servers, options: options.replication)
        let sync = ClusterSync(
            store: store, connection: connection, servers: servers, options: options, replicator: replicator, this: devices.this,
            seeds: [devices.this.device])
        sync.noteCopies(devices)
        return sync
    }

    /// A sync that only takes: every device's events from its stream into a replica of the map
    /// (``StoreOptions/replicaTakesOtherDevices``), whose own log stays empty, starting from the
    /// buckets of `devices` (docs/SYNC.md, "Following a map"). Nothing is shipped.
    ///
    /// - Throws: ``ReplicationError`` `.invalid` for a store that is not such a replica.
    public static func follow(
        store: TouristStore, connection: NATSConnection, servers: String, devices seeds: [DeviceID], options: SyncOptions = SyncOptions()
    ) async throws -> ClusterSync {
        guard store.isReplica, store.replicaTakesOtherDevices else {
            throw ReplicationError.invalid("the store at \(store.folder) is not a replica that takes other devices' events; a device that writes syncs")
        }
        let devices: StoreDevices
        do { devices = try StoreSync.devices(of: store.folder) } catch {
            throw ReplicationError.invalid("the store at \(store.folder) cannot follow a map: \(error)")
        }
        let sync = ClusterSync(
            store: store, connection: connection, servers: servers, options: options, replicator: nil, this: devices.this,
            seeds: seeds.filter { $0 != devices.this.device })
        sync.noteCopies(devices)
        return sync
    }

    /// What the store's copies hold, as the status shows it before the first take.
    private func noteCopies(_ devices: StoreDevices) {
        for copy in devices.copies {
            shared.withLock {
                $0.peers[copy.id] = SyncStatus.Peer(
                    device: copy.id.description, name: copy.file?.name, eventsHeld: copy.head.sequence, streamEvents: copy.head.sequence)
                if let file = copy.file { $0.files[copy.id] = file }
            }
        }
    }

    private init(
        store: TouristStore, connection: NATSConnection, servers: String, options: SyncOptions, replicator: MapReplicator?, this: DeviceFile,
        seeds: [DeviceID]
    ) {
        self.store = store
        self.connection = connection
        jetStream = JetStream(connection)
        self.servers = servers
        self.options = options
        self.replicator = replicator
        self.this = this
        self.seeds = seeds
        shared = Mutex(Shared())
    }

    /// Where the sync stands now (no request to the cluster).
    public var status: SyncStatus {
        let shipping = (replicator?.replicators ?? []).map { $0.status(localEvents: MapReplicator.localEvents(of: store.folder, stream: $0.stream.name)) }
        let connected = connection.isConnected
        return shared.withLock { shared in
            let contact = ([shared.lastContact] + shipping.map { $0.acknowledgedAt.flatMap(Self.parse) }).compactMap { $0 }.max()
            return SyncStatus(
                device: this.device.description, name: this.name, servers: servers, connected: connected,
                eventsToSend: shipping.reduce(0) { $0 + $1.lagEvents }, photosToSend: shipping.reduce(0) { $0 + $1.photosPending },
                peers: shared.peers.values.sorted { $0.device < $1.device },
                lastContact: contact.map { $0.formatted(.iso8601) },
                lastError: shared.lastError ?? shipping.compactMap(\.lastError).first ?? shared.peers.values.compactMap(\.lastError).first)
        }
    }

    private static func parse(_ text: String) -> Date? { try? Date(text, strategy: .iso8601) }

    /// Ships what the store holds, takes every event the other devices' streams hold now, and
    /// ships again (what was taken goes into the streams of the copies too); returns the status
    /// after. A cluster that does not answer is waited for as a start waits (an election).
    ///
    /// - Throws: ``ReplicationError`` for a cluster that stays away, a conflict in this device's
    ///   stream; a device whose history does not check is named in its peer's `lastError` and
    ///   the others are taken.
    @discardableResult
    public func syncOnce(progress: (@Sendable (String) -> Void)? = nil) async throws -> SyncStatus {
        if let replicator {
            progress?("sending this device's events")
            _ = try await replicator.shipAvailable()
        }
        var photos: [(DeviceStreamReader, [Download])] = []
        for device in try await discover() {
            if let taken = try await takeAvailable(from: device, progress: progress) { photos.append(taken) }
        }
        // Every device's events first: the map is whole before the first photo is asked for.
        for (reader, named) in photos where !named.isEmpty {
            progress?("fetching the photos of device \(name(of: reader.device)) this device keeps")
            try await fetch(named, from: reader)
        }
        if let replicator {
            progress?("sending the copies of what was taken")
            _ = try await replicator.shipAvailable()
        }
        return status
    }

    /// Ships and takes live until the task is cancelled: each other device's events are taken as
    /// they land, and a device new to the map is found within ``SyncOptions/discoveryInterval``.
    /// The cluster's failures are retried (the status says the last one); a device whose history
    /// does not check stops being taken, and is named in the status.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let replicator { group.addTask { try await replicator.run() } }
            group.addTask { await self.takeLive() }
            defer { group.cancelAll() }
            while try await group.next() != nil, !Task.isCancelled {}
        }
    }

    /// Stops nothing by itself (cancel ``run()``); the store stays open for its owner.
    func note(_ device: DeviceID, _ change: (inout SyncStatus.Peer) -> Void) {
        shared.withLock { shared in
            var peer = shared.peers[device]
                ?? SyncStatus.Peer(device: device.description, name: shared.files[device]?.name, eventsHeld: 0, streamEvents: 0)
            change(&peer)
            shared.peers[device] = peer
        }
    }
}

/// How a sync ships and takes.
public struct SyncOptions: Sendable {
    /// How this device's logs are shipped (``ReplicationOptions``; no stream name).
    public var replication = ReplicationOptions()
    /// How often a live sync looks for devices new to the map.
    public var discoveryInterval: Duration = .seconds(2)
    /// How long a take waits for one message before it asks again.
    public var pollExpiry: Duration = .seconds(2)
    /// How long a one-off sync waits through a cluster that does not answer.
    public var patience: Duration = .seconds(90)

    public init() {}
}
