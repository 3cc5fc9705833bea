import BenchKit
import EventLog
import Foundation
import TouristWorkload
#if canImport(Glibc)
import Glibc
#endif
import VirtualTourist

/// The whole workload written once to every store that the later cases read: our log with a
/// batch per session, our log with a batch per commit (as the app appends), the SQLite events
/// table with encoded bytes and with JSON, and the mutable schema. Each write is timed on its
/// own; generating the events and encoding them is not timed.
final class Workspace {
    struct Written {
        var events = 0
        var sessions = 0
        var commits = 0
        var sessionBatches = 0.0
        var commitBatches = 0.0
        /// The store's own compaction of the commit log: wall seconds and CPU seconds.
        var compactionSeconds = 0.0
        var compactionCPU = 0.0
        var sqliteEncoded = 0.0
        var sqliteJSON = 0.0
        var mutable = 0.0
        var state = TouristState()
    }

    let options: Options
    let root: String
    var sessionLog: String { root + "/session-log" }
    /// As the app appends, all in the hot tail (no compaction ran).
    var commitLog: String { root + "/commit-log" }
    /// The same log after the store's own compaction (`vt compact`).
    var compactedLog: String { root + "/compacted-log" }
    private(set) var peerEncoded: SQLiteEventTable!
    private(set) var peerJSON: SQLiteEventTable!
    private(set) var mutable: SQLiteMutableSchema!
    private var cached: Written?

    init(options: Options) {
        self.options = options
        root = Measure.temporaryFolder("workspace")
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Writes the workload the first time it is asked for. The workload is generated and
    /// encoded first; then each store is written on its own, after a `sync` so that no store
    /// pays for another's dirty pages.
    func written() throws -> Written {
        if let cached { return cached }
        var written = Written()
        var workload = Workload(seed: options.seed, livePins: 1_000)
        var sessions: [[[DomainEvent]]] = []
        while workload.events < options.events { sessions.append(workload.nextSession()) }
        written.events = workload.events
        written.sessions = sessions.count
        written.commits = sessions.reduce(0) { $0 + $1.count }
        written.state = workload.state
        say("generated \(Figure.grouped(Double(written.events))) events in \(Figure.grouped(Double(written.sessions))) sessions")

        let payloads = sessions.map { $0.map { $0.map { EventCodec.encode($0, cause: nil) } } }
        var configuration = LogConfiguration()
        configuration.durability = .none
        configuration.blockFieldColumns = options.fieldColumns
        written.sessionBatches = try timed("our log, a batch per session") {
            let log = try EventLog.open(at: sessionLog, configuration: configuration)
            for session in payloads { _ = try log.append(contentsOf: session.flatMap { $0 }) }
            try log.close()
        }
        // The hot tail as the app leaves it between compactions; compacted next, on its own.
        var hotTail = configuration
        hotTail.compactsInBackground = false
        written.commitBatches = try timed("our log, a batch per commit") {
            let log = try EventLog.open(at: commitLog, configuration: hotTail)
            for session in payloads { for commit in session { _ = try log.append(contentsOf: commit) } }
            try log.close()
        }
        try FileManager.default.copyItem(atPath: commitLog, toPath: compactedLog)
        let log = try EventLog.open(at: compactedLog, configuration: hotTail)
        sync()
        let cpuBefore = Measure.processorSeconds()
        written.compactionSeconds = try Measure.seconds { try log.compact() }
        written.compactionCPU = Measure.processorSeconds() - cpuBefore
        try log.close()
        say("compacted our log, a batch per commit, in \(Figure.fixed(written.compactionSeconds, 2)) s"
            + " (\(Figure.fixed(written.compactionCPU, 2)) s of CPU)")
        peerEncoded = try SQLiteEventTable(path: root + "/events-encoded.sqlite", synchronous: .normal, payload: .encoded)
        written.sqliteEncoded = try peerTimed("SQLite, encoded bytes", peerEncoded, sessions)
        peerJSON = try SQLiteEventTable(path: root + "/events-json.sqlite", synchronous: .normal, payload: .json)
        written.sqliteJSON = try peerTimed("SQLite, JSON", peerJSON, sessions)
        mutable = try SQLiteMutableSchema(path: root + "/mutable.sqlite", synchronous: .normal)
        written.mutable = try timed("SQLite, the mutable schema") {
            for session in sessions { try mutable.apply(session.flatMap { $0 }) }
        }
        cached = written
        return written
    }

    /// The peer's rows for each session, prepared untimed; then the transactions, timed.
    private func peerTimed(_ name: String, _ table: SQLiteEventTable, _ sessions: [[[DomainEvent]]]) throws -> Double {
        var next: UInt64 = 1
        let rows = try sessions.map { session in
            let events = session.flatMap { $0 }
            defer { next += UInt64(events.count) }
            return try table.rows(for: events, startingAt: next)
        }
        return try timed(name) { for session in rows { try table.append(session) } }
    }

    private func timed(_ name: String, _ body: () throws -> Void) throws -> Double {
        sync()
        let seconds = try Measure.seconds(body)
        say("wrote \(name) in \(Figure.fixed(seconds, 2)) s")
        return seconds
    }

    private func say(_ text: String) { FileHandle.standardError.write(Data("  \(text)\n".utf8)) }

    /// The workload's first `count` events, one by one.
    func firstEvents(_ count: Int) -> [DomainEvent] { Fixtures.events(count, seed: options.seed) }
}
