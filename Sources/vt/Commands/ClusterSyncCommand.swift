import ArgumentParser
import ClusterSync
import Foundation
import NATSClient
import Replication
import VirtualTourist

/// `vt sync --with nats://…[,…] [--once]`: the store syncs through the cluster (docs/SYNC.md)
/// instead of with a folder. Connects before the store opens, so that a cluster that cannot be
/// reached (a bad URL, wrong credentials) changes nothing.
enum ClusterSyncCommand {
    /// Whether `--with` names a cluster rather than a folder.
    static func namesCluster(_ value: String) -> Bool {
        let lowered = value.lowercased()
        return lowered.hasPrefix("nats://") || lowered.hasPrefix("tls://")
    }

    static func run(global: GlobalOptions, urls: String, once: Bool) async throws {
        let nats = try await Cluster.connect(urls, live: !once)
        defer { Task { await nats.close() } }
        let store = try await global.openStore(create: false)
        do {
            var options = SyncOptions()
            options.replication.onWait = { Terminal.note($0) }
            let sync: ClusterSync
            do { sync = try await ClusterSync.start(store: store, connection: nats, servers: Cluster.shown(urls), options: options) } catch {
                throw RuntimeError(message: "cannot sync through \(Cluster.shown(urls)): \(error)")
            }
            let status: SyncStatus
            if once {
                var progress: (@Sendable (String) -> Void)? = nil
                if !global.json { progress = { Terminal.note($0) } }
                do { status = try await sync.syncOnce(progress: progress) } catch {
                    throw RuntimeError(message: "the sync through \(Cluster.shown(urls)) stopped: \(error)")
                }
            } else {
                let interruptions = ServeCommand.interruptions()
                Terminal.note("syncing \(store.folder) through \(Cluster.shown(urls)); interrupt to stop")
                let task = Task { try await sync.run() }
                let reporting = Task { await report(sync) }
                for await _ in interruptions { break }
                task.cancel()
                reporting.cancel()
                _ = try? await task.value
                status = sync.status
            }
            try await store.close()
            try show(status, json: global.json)
            if status.peers.contains(where: { $0.lastError != nil }) { throw ExitCode(Exit.problemsFound) }
        } catch {
            try? await store.close()
            throw error
        }
    }

    /// `vt clone --from nats://… --stream VT_<device> --to DIR`: a new device of that stream's map,
    /// from the cluster alone (``DeviceJoin``).
    static func join(from urls: String, stream: String, to folder: String, name: String?, json: Bool) async throws {
        let streamName = try ReplicationStream(name: stream)
        let nats = try await Cluster.connect(urls)
        defer { Task { await nats.close() } }
        var options = SyncOptions()
        options.replication.onWait = { Terminal.note($0) }
        var storeOptions = StoreOptions()
        storeOptions.collectionInterval = nil
        var progress: (@Sendable (String) -> Void)? = nil
        if !json { progress = { Terminal.note($0) } }
        let report: DeviceJoin.Report
        do {
            report = try await DeviceJoin.join(
                connection: nats, stream: streamName, folder: folder, name: name, servers: Cluster.shown(urls), storeOptions: storeOptions,
                syncOptions: options, progress: progress)
        } catch {
            throw RuntimeError(message: "cannot make a new device from \(Cluster.shown(urls)): \(error)")
        }
        if json {
            struct View: Encodable {
                var map: String
                var device: String
                var name: String?
                var events: UInt64
                var photos: Int
                var sync: SyncStatus
            }
            return try Output.json(View(
                map: report.device.map.description, device: report.device.device.description, name: report.device.name,
                events: report.events, photos: report.photos, sync: report.status))
        }
        print("made \(folder) a new device of map \(report.device.map) through \(Cluster.shown(urls)): device \(report.device.device)"
            + (report.device.name.map { " (\($0))" } ?? ""))
        for peer in report.status.peers {
            print("  took device \(peer.device)'s log" + (peer.name.map { " (\($0))" } ?? "") + ": \(peer.eventsHeld) events"
                + (peer.lastError.map { "; refused: \($0)" } ?? ""))
        }
        print("  events: \(report.events), photos: \(report.photos)")
        if report.status.peers.contains(where: { $0.lastError != nil }) { throw ExitCode(Exit.problemsFound) }
    }

    /// Prints a line each time what is left to send or receive changes (a live sync).
    private static func report(_ sync: ClusterSync) async {
        var last = ""
        while !Task.isCancelled {
            let status = sync.status
            let line = "to send: \(status.eventsToSend) event(s), \(status.photosToSend) photo(s); to receive: \(status.eventsToReceive) event(s)"
                + (status.lastError.map { "; last error: \($0)" } ?? "")
            if line != last { Terminal.note(line) }
            last = line
            try? await Task.sleep(for: .seconds(1))
        }
    }

    static func show(_ status: SyncStatus, json: Bool) throws {
        if json { return try Output.json(status) }
        var lines = [
            "device \(status.device)\(status.name.map { " (\($0))" } ?? "") through \(status.servers)",
            "to send: \(status.eventsToSend) event(s), \(status.photosToSend) photo(s)",
        ]
        for peer in status.peers {
            lines.append(
                "device \(peer.device)\(peer.name.map { " (\($0))" } ?? ""): \(peer.eventsHeld) of its events held, \(peer.eventsToReceive) to receive"
                    + (peer.photosReceived > 0 ? ", \(peer.photosReceived) photo(s) received" : "")
                    + (peer.photosMissing > 0 ? ", \(peer.photosMissing) missing in its bucket" : ""))
            if let error = peer.lastError { lines.append(Terminal.styled("refused: ", .red) + error) }
        }
        if status.peers.isEmpty { lines.append("no other device of this map has shipped its log to the cluster yet") }
        if let contact = status.lastContact { lines.append("last contact with the cluster: \(contact)") }
        Output.lines(lines)
    }
}
