import ClusterSync
import DeviceLogs
import Foundation
import NATSClient
import Replication
import Synchronization
import VirtualTourist
import WebApp

/// What `vt serve --replicate` or `vt serve --follow` runs beside the web app: the replicator
/// shipping the served store's events, or the follower keeping the served replica live. The
/// page reads its state through ``view``; a failure that retrying cannot cure (a conflict with
/// another writer, a chain that does not match) stops only the replication, is printed at
/// once, and stays on the page, while the app goes on serving.
final class ServeReplication: Sendable {
    /// Closes the connection to the cluster (the one there is, for a sync that connects later).
    private let close: @Sendable () async -> Void
    private let task: Task<Void, Never>
    private let stopped: Failure
    private let status: @Sendable () -> ReplicationView

    init(close: @escaping @Sendable () async -> Void, stopped: Failure, status: @escaping @Sendable () -> ReplicationView, task: Task<Void, Never>) {
        self.close = close
        self.task = task
        self.stopped = stopped
        self.status = status
    }

    /// Ships the store at `folder` (open in this process, its last event `lastSequence`) to the
    /// cluster at `urls`, over `connection` (connected before the store was opened, so that a
    /// cluster that cannot be reached changes nothing); closes the connection when it fails.
    static func replicating(
        store folder: String, lastSequence: @escaping @Sendable () -> UInt64, over connection: NATSConnection, to urls: String,
        stream: String?, replicas: Int?
    ) async throws -> ServeReplication {
        var options = ReplicationOptions()
        options.stream = stream
        options.replicas = replicas
        let replicator: MapReplicator
        do {
            replicator = try await MapReplicator.start(store: folder, connection: connection, servers: Cluster.shown(urls), options: options)
        } catch {
            await connection.close()
            throw RuntimeError(message: "cannot replicate to \(Cluster.shown(urls)): \(error)")
        }
        let stopped = Failure()
        // Below the app's own work: on a busy machine the lag grows (and shows), commits stay fast.
        let task = Task(priority: .background) { await Self.watch(stopped, "replication") { try await replicator.run() } }
        Terminal.note("replicating to stream \(replicator.streams.map(\.name).joined(separator: ", ")) on \(Cluster.shown(urls))")
        return ServeReplication(close: { await connection.close() }, stopped: stopped, status: {
            let status = replicator.status(localEvents: lastSequence())
            return ReplicationView(
                role: .primary, stream: status.stream, servers: status.servers, events: status.localEvents,
                lagEvents: status.lagEvents, pendingPhotos: status.photosPending, missingPhotos: status.photosMissing,
                rewriting: status.rewrite != nil, lastError: stopped.message ?? status.lastError)
        }, task: task)
    }

    /// Opens (restoring it first when the folder is new) a read-only replica of `stream` at
    /// `folder` and follows the stream (the whole map's, when it has several devices:
    /// ``followingMap(_:over:urls:into:storeOptions:)``); the caller serves the store and closes it.
    static func following(
        _ stream: ReplicationStream, from urls: String, into folder: String, storeOptions: StoreOptions
    ) async throws -> (ServeReplication, TouristStore) {
        let connection = try await Cluster.connect(urls, live: true)
        let several: [DeviceID]?
        do { several = try await MapFollower.severalDevices(of: stream, jetStream: JetStream(connection)) } catch {
            await connection.close()
            throw RuntimeError(message: "cannot follow stream \(stream.name) on \(Cluster.shown(urls)): \(error)")
        }
        if several != nil {
            return try await followingMap(stream, over: connection, urls: urls, into: folder, storeOptions: storeOptions)
        }
        let follower: Follower
        do {
            follower = try await Follower.start(
                connection: connection, stream: stream, folder: folder, servers: Cluster.shown(urls), storeOptions: storeOptions,
                progress: { Terminal.note($0) })
        } catch {
            await connection.close()
            throw RuntimeError(message: "cannot follow stream \(stream.name) on \(Cluster.shown(urls)): \(error)")
        }
        let stopped = Failure()
        let task = Task { await Self.watch(stopped, "following") { try await follower.run() } }
        Terminal.note("following stream \(stream.name) on \(Cluster.shown(urls)) (at event \(follower.store.lastSequence))")
        let replication = ServeReplication(close: { await connection.close() }, stopped: stopped, status: {
            let status = follower.status
            return ReplicationView(
                role: .replica, stream: status.stream, servers: status.servers, events: status.events,
                lagEvents: status.lagEvents, pendingPhotos: 0, missingPhotos: status.missingPhotos,
                rewriting: status.streamRewriting, lastError: stopped.message ?? status.lastError)
        }, task: task)
        return (replication, follower.store)
    }

    /// How replication stands now, for the page.
    var view: @Sendable () -> ReplicationView { status }

    /// Stops the replication and closes the connection (the caller closes the store after).
    func stop() async {
        task.cancel()
        await task.value
        await close()
    }

    /// Runs `work` until it ends; an error that ends it is printed and kept for the page.
    static func watch(_ stopped: Failure, _ what: String, _ work: @Sendable () async throws -> Void) async {
        do { try await work() } catch is CancellationError {} catch {
            let message = "\(what) stopped: \(error)"
            stopped.set(message)
            Terminal.note(message)
        }
    }

    /// The error that stopped the replication, shared by its task and the page.
    final class Failure: Sendable {
        private let state = Mutex<String?>(nil)
        var message: String? { state.withLock { $0 } }
        func set(_ message: String) { state.withLock { $0 = message } }
    }
}
