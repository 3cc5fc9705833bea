import ArgumentParser
import ClusterSync
import EventLog
import Foundation
import NATSClient
import Replication
import VirtualTourist

/// The cluster named on the command line.
enum Cluster {
    /// Connects, with a message that hides credentials. A `live` connection (a command that
    /// runs until it is stopped) never stops reconnecting to a cluster that went away; a
    /// one-off command's gives up after ``NATSOptions/maxReconnectTime``.
    static func connect(_ urls: String, live: Bool = false) async throws -> NATSConnection {
        do { return try await NATSConnection.connect(urls, options: live ? .live : NATSOptions()) } catch let error as NATSError {
            throw RuntimeError(message: "cannot connect to the NATS cluster: \(error)")
        }
    }

    /// The URLs as they may be shown and stored: credentials replaced by `***`.
    static func shown(_ urls: String) -> String {
        ((try? NATSServerURL.parseList(urls)) ?? []).map(\.description).joined(separator: ",")
    }
}

/// `vt replicate --to nats://… [--once] [--stream NAME] [--status]`.
struct ReplicateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate", abstract: "Ship the store's events and photos into a NATS JetStream cluster (docs/REPLICATION.md).",
        discussion: "Reads the log beside a running app and never holds it back. Continuous until interrupted, or --once.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The cluster's URLs, comma-separated (nats://[user:password@]host:port, tls://…).") var to: String?
    @Option(help: "The stream's name (default: VT_ and the log id).") var stream: String?
    @Option(help: "Copies the cluster keeps (default 3 on a cluster, 1 on a lone server).") var replicas: Int?
    @Flag(help: "Ship what the log holds now, then stop.") var once = false
    @Flag(help: "Show what was acknowledged and the lag, from the store's record (and the cluster with --to).") var status = false
    @Flag(help: "Rewrite the stream from the log first, so that places forgotten after they were shipped leave it and the bucket.")
    var rewrite = false

    func validate() throws {
        if !status, to == nil { throw ValidationError("name the cluster with --to nats://host:port") }
        if rewrite, status { throw ValidationError("--rewrite changes the stream; --status only looks") }
        if let replicas, !(1...5).contains(replicas) { throw ValidationError("--replicas must be 1 to 5") }
    }

    func run() async throws {
        let folder = global.storePath
        guard FileManager.default.fileExists(atPath: folder + "/log") else {
            throw RuntimeError(message: "there is no store at \(folder); point --store / VT_STORE at one")
        }
        if status, to == nil { return try printRecords(folder) }
        let nats = try await Cluster.connect(to!, live: !once)
        defer { Task { await nats.close() } }
        var options = ReplicationOptions()
        options.stream = stream
        options.replicas = replicas
        options.onWait = { Terminal.note($0) }
        let replicator = try await MapReplicator.start(store: folder, connection: nats, servers: Cluster.shown(to!), options: options)
        if status { return try show(replicator.statuses) }
        if rewrite { try replicator.requestRewrite() }
        let streams = replicator.streams.map(\.name).joined(separator: ", ")
        if once {
            let bar = ProgressBar()
            let before = replicator.statuses.reduce(0) { $0 + $1.acknowledgedEvents }
            let started = ContinuousClock.now
            let result = try await replicator.shipAvailable { bar.update("replicating", done: Int64($0.acknowledgedEvents), total: Int64($0.localEvents)) }
            bar.finish()
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            let after = result.reduce(0) { $0 + $1.acknowledgedEvents }
            let shipped = after - min(before, after)
            Terminal.note("shipped \(shipped) events in \(String(format: "%.2f", seconds)) s"
                + (seconds > 0 ? " (\(Int(Double(shipped) / seconds)) events/s)" : "")
                + (result.count > 1 ? " into \(result.count) streams, one for each device's log" : ""))
            for each in replicator.replicators {
                if let rewrite = each.lastRewrite { Terminal.note(Self.describe(rewrite, stream: each.stream.name)) }
            }
            return try show(result)
        }
        let interruptions = ServeCommand.interruptions()
        Terminal.note("replicating \(folder) to stream\(replicator.streams.count > 1 ? "s" : "") \(streams); interrupt to stop")
        let task = Task { try await replicator.run() }
        for await _ in interruptions { break }
        task.cancel()
        try await task.value
        try show(replicator.statuses)
    }

    static func describe(_ rewrite: RewriteReport, stream: String) -> String {
        !rewrite.streamRewritten
            ? "the stream \(stream) holds no event the log has erased since; it was left as it was"
                + (rewrite.photosDeleted > 0 ? ", and \(rewrite.photosDeleted) photos no event names were deleted from its bucket" : "")
            : "rewrote the stream \(stream) (\(rewrite.messages) messages"
                + (rewrite.changedMessages > 0 ? ", \(rewrite.changedMessages) of them held events the log has erased since" : "")
                + "); \(rewrite.photosDeleted) photos no event names were deleted from its bucket"
    }

    /// One status as before for a store of one device (its JSON an object); a list, one a
    /// stream, for a store of several.
    private func show(_ statuses: [ReplicationStatus]) throws {
        if statuses.count == 1 { return try show(statuses[0]) }
        if global.json { return try Output.json(statuses) }
        for status in statuses { try show(status) }
    }

    private func show(_ status: ReplicationStatus) throws {
        if global.json { return try Output.json(status) }
        Output.lines([
            "stream \(status.stream) on \(status.servers)",
            "events: \(status.acknowledgedEvents) of \(status.localEvents) acknowledged (lag \(status.lagEvents))",
            "photos: \(status.photosUploaded) uploaded, \(status.photosPending) pending, \(status.photosMissing) missing at the source",
        ] + (status.rewrite.map { ["rewriting the stream to take out a forgotten place: at step \($0.rawValue)"] } ?? [])
            + (status.lastError.map { ["last error: \($0)"] } ?? []))
    }

    private func printRecords(_ folder: String) throws {
        let records = try ReplicationRecord.all(store: folder)
        guard !records.isEmpty else { return Output.lines(["\(folder) has never been replicated"]) }
        let statuses = records.map { record in
            ReplicationStatus(record: record, localEvents: MapReplicator.localEvents(of: folder, stream: record.stream))
        }
        if global.json, statuses.count > 1 { return try Output.json(statuses) }
        for status in statuses { try show(status) }
    }
}

/// `vt restore --from nats://… --stream NAME --to DIR [--at SEQ|TIME]`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Build a new store from a replication stream and its photo bucket.",
        discussion: "Every event is checked against the chain heads shipped with it. DIR must not exist or be empty.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The cluster's URLs.") var from: String
    @Option(help: "The stream to restore from.") var stream: String
    @Option(help: "The new store's folder.") var to: String
    @Option(help: "Stop after this event number, or at this time (ISO 8601).") var at: String?

    func run() async throws {
        let point: RestorePoint? = try at.map { text in
            if let number = UInt64(text) {
                guard number >= 1 else { throw ValidationError("--at counts events from 1") }
                return .sequence(number)
            }
            return .time(try ArgumentValues.time(text))
        }
        let name = try ReplicationStream(name: stream)
        let nats = try await Cluster.connect(from)
        defer { Task { await nats.close() } }
        let bar = ProgressBar()
        let report = try await StreamRestore.restore(
            connection: nats, stream: name, to: to, at: point,
            progress: { bar.update("restoring", done: Int64($0), total: Int64($1)) }, waiting: { Terminal.note($0) })
        bar.finish()
        Terminal.note("restored \(report.events) events from \(report.messages) messages and \(report.photos) photos into \(to)"
            + " in \(String(format: "%.2f", report.seconds)) s"
            + (report.seconds > 0 ? " (\(Int(Double(report.events) / report.seconds)) events/s)" : "") + "; head \(report.head?.hash.description ?? "-")"
            + (report.missingPhotos > 0 ? "; \(report.missingPhotos) photos were not in the bucket" : "")
            + (report.placesErased > 0 ? "; \(report.placesErased) forgotten places erased as in the original" : "")
            + (report.otherDevices > 0
                ? "; with the logs of the map's \(report.otherDevices) other devices (\(report.otherDeviceEvents) events), from their streams" : "")
            + (report.devicesNotFound.isEmpty
                ? "" : "; no stream in the cluster holds the log of device \(report.devicesNotFound.joined(separator: ", ")): its events are not in the copy"))
    }
}

/// `vt follow --from nats://… --stream NAME` into the store folder, read-only and live: the
/// stream's one log, or, when its map has several devices, the whole map (docs/SYNC.md,
/// "Following a map").
struct FollowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow", abstract: "Keep a read-only replica of a replicated store, live, in the store folder.",
        discussion: """
            A new or empty folder is restored from the stream first. The replica refuses every change. When the stream's map \
            has several devices, the replica holds every device's log, each taken from its stream.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The cluster's URLs.") var from: String
    @Option(help: "The stream to follow.") var stream: String

    func run() async throws {
        let name = try ReplicationStream(name: stream)
        let nats = try await Cluster.connect(from, live: true)
        defer { Task { await nats.close() } }
        var options = StoreOptions()
        options.collectionInterval = nil
        if try await MapFollower.severalDevices(of: name, jetStream: JetStream(nats)) != nil {
            let follower = try await MapFollower.start(
                connection: nats, stream: name, folder: global.storePath, servers: Cluster.shown(from), storeOptions: options,
                progress: { Terminal.note($0) })
            // Armed before it says it is following, so that no interruption is lost.
            let interruptions = ServeCommand.interruptions()
            Terminal.note(
                "following the map of stream \(name.name) into \(global.storePath): \(follower.status.peers.count) devices, \(follower.store.lastSequence) events; interrupt to stop")
            try await untilInterrupted(interruptions) { try await follower.run() }
            try await follower.close()
            let status = follower.status
            Terminal.note("the replica holds \(follower.store.lastSequence) events of \(status.peers.count) devices; \(status.eventsToReceive) more were in the cluster")
            return
        }
        let follower = try await Follower.start(
            connection: nats, stream: name, folder: global.storePath, servers: Cluster.shown(from), storeOptions: options,
            progress: { Terminal.note($0) })
        let interruptions = ServeCommand.interruptions()
        Terminal.note("following stream \(name.name) into \(global.storePath) (at event \(follower.store.lastSequence)); interrupt to stop")
        try await untilInterrupted(interruptions) { try await follower.run() }
        try await follower.close()
        let status = follower.status
        Terminal.note("the replica holds \(status.events) events; the stream was seen at \(status.streamEvents)")
    }

    /// Runs `work` until an interruption (Ctrl-C, SIGTERM), then cancels it; what ends it
    /// sooner (a history that does not check, a disk that fails) ends the command with its error.
    private func untilInterrupted(_ interruptions: AsyncStream<Int32>, _ work: @escaping @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await work() }
            group.addTask { for await _ in interruptions { break } }
            defer { group.cancelAll() }
            do { try await group.next() } catch is CancellationError {}
        }
    }
}
