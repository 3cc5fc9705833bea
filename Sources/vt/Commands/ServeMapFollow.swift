import ClusterSync
import NATSClient
import Replication
import VirtualTourist
import WebApp

/// What `vt serve --follow` runs for a stream whose map has several devices (docs/SYNC.md,
/// "Following a map"): a replica of the whole map, every device's stream taken live.
extension ServeReplication {
    /// Opens (making it first when the folder is new) a read-only replica of the map of
    /// `stream`, over `connection`, and keeps it live; the caller serves the store and closes it.
    static func followingMap(
        _ stream: ReplicationStream, over connection: NATSConnection, urls: String, into folder: String, storeOptions: StoreOptions
    ) async throws -> (ServeReplication, TouristStore) {
        let follower: MapFollower
        do {
            follower = try await MapFollower.start(
                connection: connection, stream: stream, folder: folder, servers: Cluster.shown(urls), storeOptions: storeOptions,
                progress: { Terminal.note($0) })
        } catch {
            await connection.close()
            throw RuntimeError(message: "cannot follow the map of stream \(stream.name) on \(Cluster.shown(urls)): \(error)")
        }
        let stopped = Failure()
        let task = Task { await Self.watch(stopped, "following") { try await follower.run() } }
        Terminal.note(
            "following the map of stream \(stream.name) on \(Cluster.shown(urls)): \(follower.status.peers.count) devices, \(follower.store.lastSequence) events")
        let replication = ServeReplication(close: { await connection.close() }, stopped: stopped, status: {
            view(of: follower.status, role: .replica, stream: stream.name, events: follower.store.lastSequence, stopped: stopped)
        }, task: task)
        return (replication, follower.store)
    }
}
