import EventLog
import Foundation
import GRDB
import VirtualTourist

/// The peer for the log: SQLite (through GRDB) holding the same events in one table, one row per
/// event, in WAL mode. The payload is either the very bytes our log stores (the protobuf
/// envelope) or the event's JSON line (docs/EXPORT.md), as a typical app would keep it.
///
/// ```swift
/// let peer = try SQLiteEventTable(path: "/tmp/peer.sqlite", synchronous: .full, payload: .encoded)
/// try peer.append([row])              // one transaction
/// let state = try peer.replay()       // read, decode, fold
/// ```
public final class SQLiteEventTable {
    public enum Synchronous: String, Sendable { case full = "FULL", normal = "NORMAL" }

    public enum Payload: String, Sendable {
        case encoded = "encoded bytes"
        case json = "JSON"
    }

    public let path: String
    public let payload: Payload
    private let pool: DatabasePool
    private var nextSequence: Int64 = 1

    public init(path: String, synchronous: Synchronous, payload: Payload) throws {
        self.path = path
        self.payload = payload
        pool = try DatabasePool(path: path)
        try setSynchronous(synchronous, on: pool)
        let type = payload == .encoded ? "BLOB" : "TEXT"
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, payload \(type) NOT NULL)")
        }
        nextSequence = try pool.read { db in try Int64.fetchOne(db, sql: "SELECT IFNULL(MAX(seq), 0) FROM events") ?? 0 } + 1
    }

    /// The column values for `events`, numbered from the table's next sequence number (their
    /// encoding is prepared outside what is timed, as our log's payloads are).
    public func rows(for events: [DomainEvent], startingAt first: UInt64) throws -> [DatabaseValue] {
        var sequence = first
        return try events.map { event in
            defer { sequence += 1 }
            switch payload {
            case .encoded:
                return Data(EventCodec.encode(event, cause: nil)).databaseValue
            case .json:
                let recorded = RecordedEvent(sequence: sequence, timestamp: SystemClock().now(), cause: nil, event: event)
                return try EventJSON(recorded).encodedLine().databaseValue
            }
        }
    }

    /// Appends the rows in one transaction (durable on return under `FULL`).
    public func append(_ rows: some Collection<DatabaseValue>) throws {
        let first = nextSequence
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO events (seq, time, payload) VALUES (?, ?, ?)")
            let time = SystemClock().now().microsecondsSinceEpoch
            var sequence = first
            for row in rows {
                try statement.execute(arguments: [sequence, time, row])
                sequence += 1
            }
        }
        nextSequence = first + Int64(rows.count)
    }

    /// Reads every event up to `through` in order, decodes it and folds it into a state.
    public func replay(through last: UInt64? = nil) throws -> TouristState {
        try pool.read { db in
            var state = TouristState()
            let rows = try Row.fetchCursor(
                db, sql: "SELECT seq, time, payload FROM events WHERE seq <= ? ORDER BY seq",
                arguments: [last.map { Int64($0) } ?? Int64.max])
            while let row = try rows.next() {
                let sequence = UInt64(row[0] as Int64)
                let timestamp = LogTimestamp(microsecondsSinceEpoch: row[1])
                switch payload {
                case .encoded:
                    let bytes = try row.withUnsafeData(atIndex: 2) { data in [UInt8](data ?? Data()) }
                    state.apply(try EventCodec.decode(LogEvent(sequence: sequence, timestamp: timestamp, payload: bytes[...])))
                case .json:
                    let line: String = row[2]
                    state.apply(try EventJSON.decode(line).recorded())
                }
            }
            return state
        }
    }

    /// The bytes the database takes once its write-ahead log is checkpointed into it.
    public func bytesOnDisk() throws -> Int64 { try checkpointedBytes(pool, path) }

    public func close() throws { try pool.close() }
}

/// The bytes a database takes once its write-ahead log is checkpointed into it.
func checkpointedBytes(_ pool: DatabasePool, _ path: String) throws -> Int64 {
    try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    return [path, path + "-wal"].reduce(0) { total, file in
        total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0)
    }
}

/// Sets `synchronous` on the pool's writer connection (GRDB's WAL setup sets NORMAL when it opens
/// the pool, so it must come after) and checks that SQLite took it.
func setSynchronous(_ synchronous: SQLiteEventTable.Synchronous, on pool: DatabasePool) throws {
    let level = try pool.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
        return try Int.fetchOne(db, sql: "PRAGMA synchronous")
    }
    guard level == (synchronous == .full ? 2 : 1) else {
        throw DatabaseError(message: "SQLite did not take synchronous = \(synchronous.rawValue) (it reports \(level ?? -1))")
    }
}
