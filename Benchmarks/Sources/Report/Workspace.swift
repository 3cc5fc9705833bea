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

    /// Writes the workload the first time it is asked for, to each store on its own, after a
    /// `sync` so that no store pays for another's dirty pages. The workload is generated again
    /// for each store, a piece at a time (`eachPiece`): at 10 M events, its encodings and the
    /// peers' rows alone come to about 6 GB (161 and 430 bytes an event), on top of the events
    /// themselves, all held at once. Generating and encoding a piece is not
    /// timed; each store's figure is the sum of its timed parts (open, the pieces' appends, close).
    func written() throws -> Written {
        if let cached { return cached }
        var written = Written()
        var configuration = LogConfiguration()
        configuration.durability = .none
        configuration.payloadCodec = options.fieldColumns ? EventCodec.blockCodec : nil
        var generated: Workload?
        written.sessionBatches = try timed("our log, a batch per session") { clock in
            let log = try clock.time { try EventLog.open(at: sessionLog, configuration: configuration) }
            generated = try eachPiece { piece in
                written.sessions += piece.count
                written.commits += piece.reduce(0) { $0 + $1.count }
                let payloads = piece.map { $0.flatMap { $0 }.map { EventCodec.encode($0, cause: nil) } }
                try clock.time { for session in payloads { _ = try log.append(contentsOf: session) } }
            }
            try clock.time { try log.close() }
        }
        guard let generated else { preconditionFailure("the workload was not generated") }
        written.events = generated.events
        written.state = generated.state
        say("(the workload: \(Figure.grouped(Double(written.events))) events in \(Figure.grouped(Double(written.sessions))) sessions)")

        // The hot tail as the app leaves it between compactions; compacted next, on its own.
        var hotTail = configuration
        hotTail.compactsInBackground = false
        written.commitBatches = try timed("our log, a batch per commit") { clock in
            let log = try clock.time { try EventLog.open(at: commitLog, configuration: hotTail) }
            try eachPiece { piece in
                let commits = piece.flatMap { $0 }.map { $0.map { EventCodec.encode($0, cause: nil) } }
                try clock.time { for commit in commits { _ = try log.append(contentsOf: commit) } }
            }
            try clock.time { try log.close() }
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
        written.sqliteEncoded = try peerTimed("SQLite, encoded bytes", peerEncoded)
        peerJSON = try SQLiteEventTable(path: root + "/events-json.sqlite", synchronous: .normal, payload: .json)
        written.sqliteJSON = try peerTimed("SQLite, JSON", peerJSON)
        mutable = try SQLiteMutableSchema(path: root + "/mutable.sqlite", synchronous: .normal)
        written.mutable = try timed("SQLite, the mutable schema") { clock in
            try eachPiece { piece in
                let sessions = piece.map { $0.flatMap { $0 } }
                try clock.time { for session in sessions { try mutable.apply(session) } }
            }
        }
        cached = written
        return written
    }

    /// Events generated at a time, in whole sessions: about 250 MB of events, encodings and
    /// rows in hand at once.
    static let pieceEvents = 250_000

    /// Generates the workload from its seed and hands it over in pieces of whole sessions
    /// (each commit an array of events, each session an array of commits); the same sessions,
    /// in the same order, every time. Returns the generator at the end, for its state.
    @discardableResult
    private func eachPiece(_ body: ([[[DomainEvent]]]) throws -> Void) throws -> Workload {
        var workload = Workload(seed: options.seed, livePins: 1_000)
        while workload.events < options.events {
            let end = min(options.events, workload.events + Self.pieceEvents)
            var piece: [[[DomainEvent]]] = []
            while workload.events < end { piece.append(workload.nextSession()) }
            try body(piece)
        }
        return workload
    }

    /// The peer's rows for each session of a piece, prepared untimed; then the transactions, timed.
    private func peerTimed(_ name: String, _ table: SQLiteEventTable) throws -> Double {
        try timed(name) { clock in
            var next: UInt64 = 1
            try eachPiece { piece in
                let rows = try piece.map { session in
                    let events = session.flatMap { $0 }
                    defer { next += UInt64(events.count) }
                    return try table.rows(for: events, startingAt: next)
                }
                try clock.time { for session in rows { try table.append(session) } }
            }
        }
    }

    private func timed(_ name: String, _ body: (inout Measure.Stopwatch) throws -> Void) throws -> Double {
        sync()
        var clock = Measure.Stopwatch()
        try body(&clock)
        say("wrote \(name) in \(Figure.fixed(clock.seconds, 2)) s")
        return clock.seconds
    }

    private func say(_ text: String) { FileHandle.standardError.write(Data("  \(text)\n".utf8)) }

    /// The workload's first `count` events, one by one.
    func firstEvents(_ count: Int) -> [DomainEvent] { Fixtures.events(count, seed: options.seed) }
}
