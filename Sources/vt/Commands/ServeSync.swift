import ClusterSync
import Foundation
import NATSClient
import Replication
import Synchronization
import VirtualTourist
import WebApp

/// What `vt serve --sync` runs beside the web app (docs/SYNC.md): the sync through the cluster,
/// started when the cluster answers. A device opened while the cluster is away works alone, and
/// its sync starts by itself once the cluster is back; the page says so meanwhile.
extension ServeReplication {
    /// Syncs the open store through the cluster at `urls`, over `connection` when the cluster
    /// answered before the store was opened, else over one made once it answers.
    static func syncing(store: TouristStore, over connection: NATSConnection?, to urls: String, replicas: Int?) -> ServeReplication {
        let options = {
            var options = SyncOptions()
            options.replication.replicas = replicas
            options.replication.onWait = { Terminal.note($0) }
            return options
        }()
        let shown = Cluster.shown(urls)
        let running = Mutex<(connection: NATSConnection?, sync: ClusterSync?, waiting: String?)>((connection, nil, nil))
        let stopped = Failure()
        let task = Task(priority: .background) {
            await Self.watch(stopped, "sync") {
                var told = false
                while !Task.isCancelled {
                    do {
                        var current = running.withLock { $0.connection }
                        if current == nil {
                            current = try await NATSConnection.connect(urls, options: .live)
                            running.withLock { $0.connection = current }
                        }
                        let sync = try await ClusterSync.start(store: store, connection: current!, servers: shown, options: options)
                        running.withLock {
                            $0.sync = sync
                            $0.waiting = nil
                        }
                        Terminal.note("syncing through \(shown) as device \(sync.status.device)")
                        try await sync.run()
                        return
                    } catch let error where Self.isAway(error) {
                        // The cluster away: the device works alone and tries again.
                        running.withLock { $0.waiting = "the cluster at \(shown) cannot be reached (\(error)); this device works alone and syncs once it answers" }
                        if !told { Terminal.note(running.withLock { $0.waiting }!) }
                        told = true
                        try await Task.sleep(for: .seconds(2))
                    }
                }
            }
        }
        let device = (try? StoreSync.devices(of: store.folder).this.device.description) ?? ""
        return ServeReplication(close: { await running.withLock { $0.connection }?.close() }, stopped: stopped, status: {
            let (sync, waiting) = running.withLock { ($0.sync, $0.waiting) }
            guard let sync else {
                let acknowledged = (try? ReplicationRecord.load(store: store.folder, stream: "VT_" + device))??.acknowledgedEvent ?? 0
                let own = MapReplicator.localEvents(of: store.folder, stream: "VT_" + device)
                var view = ReplicationView(
                    role: .sync, stream: "VT_" + device, servers: shown, events: store.lastSequence, lagEvents: own - min(own, acknowledged),
                    pendingPhotos: 0, missingPhotos: 0, lastError: stopped.message ?? waiting ?? "connecting to \(shown)")
                view.connected = false
                return view
            }
            let status = sync.status
            return view(of: status, role: .sync, stream: "VT_" + status.device, events: store.lastSequence, stopped: stopped)
        }, task: task)
    }

    /// The page's view of a sync through the cluster: a device's (`.sync`: its lag is what it has
    /// to send) or a replica's of a whole map (`.replica`: its lag is what it has to receive).
    static func view(of status: SyncStatus, role: ReplicationView.Role, stream: String, events: UInt64, stopped: Failure) -> ReplicationView {
        let sends = role == .sync
        var view = ReplicationView(
            role: role, stream: stream, servers: status.servers, events: events,
            lagEvents: sends ? status.eventsToSend : status.eventsToReceive, pendingPhotos: sends ? status.photosToSend : 0,
            missingPhotos: status.peers.reduce(0) { $0 + $1.photosMissing }, lastError: stopped.message ?? status.lastError)
        view.receiveEvents = status.eventsToReceive
        view.peers = status.peers.count
        view.lastContact = status.lastContact
        view.connected = status.connected
        return view
    }

    /// Whether `error` says the cluster cannot be reached now (not that the URL or the
    /// credentials are wrong, which waiting does not cure).
    private static func isAway(_ error: any Error) -> Bool {
        switch error {
        case NATSError.unreachable, NATSError.timeout, NATSError.connectionLost, NATSError.noResponders: true
        case ReplicationError.cluster: true
        default: false
        }
    }
}
