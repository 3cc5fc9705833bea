/// Iterates a log's events in order, checking each batch. Made by ``LogReader``.
///
/// ```swift
/// let cursor = try reader.events(from: 1)
/// while let event = try cursor.next() { apply(event) }
/// // Later, after more appends, the same cursor continues where it stopped:
/// while let event = try cursor.next() { apply(event) }
/// ```
///
/// `next()` returns nil at the current end of the log; it can be called again to pick up
/// events appended since. Memory: one decoded batch and one read window, whatever the log's
/// length. Cost per event: amortised O(1) — a batch is read, checked and decompressed once.
///
/// Its first read that finds the log's format asks the reader's format reading for an engine,
/// a ``BlockTailCursor`` (format 2) or a ``LegacyCursor`` (format 1), and every read after it
/// goes to that engine.
public final class LogCursor {
    enum Start {
        case sequence(UInt64)
        case time(LogTimestamp)
    }

    private let reader: LogReader
    private let start: Start
    private let lastSequence: UInt64?
    private let lastTime: LogTimestamp?
    /// Where a format-2 cursor may start reading the active segment (``TailPosition``).
    private let tailPosition: TailPosition?
    /// The format's engine, made by the first read that finds the log's format.
    private var engine: (any CursorEngine)?

    /// Where and why the events stop for now, when the log ends in a torn or in-progress batch.
    public var incompleteTail: (file: String, offset: Int64, reason: String)? { engine?.incompleteTail }

    init(reader: LogReader, start: Start, lastSequence: UInt64?, lastTime: LogTimestamp?, tailPosition: TailPosition? = nil) {
        self.reader = reader
        self.start = start
        self.lastSequence = lastSequence
        self.lastTime = lastTime
        self.tailPosition = tailPosition
    }

    deinit { engine?.close() }

    /// The next event, or nil at the current end of the log (or past the cursor's bounds).
    public func next() throws -> LogEvent? {
        if let engine { return try engine.next() }
        if reader.reading == nil { try reader.refresh() }
        // No data file yet: nothing to read, and no format to read it by; the next read looks again.
        guard let reading = reader.reading else { return nil }
        let engine = reading.cursor(start: start, lastSequence: lastSequence, lastTime: lastTime, tailPosition: tailPosition)
        self.engine = engine
        return try engine.next()
    }
}
