/// How a log is written. Readers need none of it.
///
/// ```swift
/// var configuration = LogConfiguration()
/// configuration.durability = .interval(.milliseconds(50))
/// configuration.clock = FixedClock(...)      // tests: exact, repeatable logs
/// let log = try EventLog.open(at: path, configuration: configuration)
/// ```
public struct LogConfiguration: Sendable {
    /// When an append counts as done.
    public enum Durability: Sendable, Hashable {
        /// The append returns once its batch is on stable storage (`fdatasync`; `F_FULLFSYNC`
        /// on Apple systems). Appends that arrive while a sync runs share the next one (group
        /// commit). Survives kill -9 and power loss.
        case always
        /// The append returns once its batch is written to the operating system; a background
        /// task syncs every interval. Survives kill -9; a power cut can lose up to one interval.
        case interval(Duration)
        /// The append returns once written to the operating system, which syncs when it
        /// chooses. Survives kill -9, not a power cut. Sealing a segment and closing still sync.
        case none
    }

    public var durability: Durability = .always
    /// zstd level for format 2's hot-tail records (and format 1's batches); see
    /// `ZSTD_minCLevel()...ZSTD_maxCLevel()`. 1: the hot tail lives until the next compaction,
    /// and level 1 against 3 made buffered appends 1.25 M/s instead of 1.03-1.07 M/s for 0.2 %
    /// more bytes (docs/BENCHMARKS-JOURNAL.md, "Buffered append past a million a second").
    public var compressionLevel: Int32 = 1
    /// Tests only: a writer of format 1, to make fixtures of old logs (created, or opened, in
    /// format 1). Nil for every app: a log is written in format 2, and opening a format-1 log to
    /// write is refused with ``LogError/Code/needsUpgrade``. FORMAT.md describes both formats.
    var fixtureWriter: (any FixtureWriterOpener)? = nil
    /// A new segment starts once the current one reaches this many bytes (format 1).
    public var segmentSize: Int = 64 << 20
    /// Format 2: a new hot-tail segment starts once the active one reaches this many bytes;
    /// each sealed segment is then compacted into a block file.
    public var hotTailSegmentSize: Int = 4 << 20
    /// Format 2: after a sync, the writer leaves a tail checkpoint once the active segment holds
    /// this many more bytes of records than at its last one (FORMAT.md, "Tail checkpoint"), so
    /// an open after a crash rehashes at most about this much. Nil: only at a clean close.
    public var tailCheckpointInterval: Int? = 512 << 10
    /// Format 2: raw bytes of events a sealed block aims at (FORMAT.md, "Compaction").
    public var blockSize: Int = 1 << 20
    /// Format 2: how compaction lays out a block's events.
    public var blockLayout: LogFormat.Layout = .columns
    /// Format 2: a codec that knows the payloads, for blocks in codec 2 (columns layout only);
    /// the log writes it when it is smaller than zstd alone, and reads it back. None: blocks are
    /// zstd over the layout's bytes (codec 1) or raw. The app's store gives `FieldColumnsCodec`:
    /// its compacted log takes 45.7 bytes an event instead of 67.4, for more compaction CPU
    /// (docs/BENCHMARKS-JOURNAL.md, "Codec 2: field columns").
    public var payloadCodec: (any BlockPayloadCodec)? = nil
    /// Format 2: the zstd level compaction uses for blocks.
    public var blockCompressionLevel: Int32 = 3
    /// Format 2: what each block file's key summary records (FORMAT.md, "Key summaries"): none
    /// when nil. With one, writing a block file writes its summary, and opening the log builds
    /// the missing ones in the background.
    public var blockKeys: BlockKeys? = nil
    /// Format 2: compact each sealed segment in the background, in the writer's process.
    public var compactsInBackground = true
    /// Bytes of segment between two sparse-index entries.
    public var indexInterval: Int = 16 << 10
    /// The largest event accepted, in bytes.
    public var maxEventSize: Int = 4 << 20
    /// The largest batch (events plus their framing, before compression), in bytes; at most
    /// 64 MiB (FORMAT.md). One append larger than this is refused.
    public var maxBatchSize: Int = 32 << 20
    /// Zeros written ahead of the data under `.always`, so each sync overwrites allocated
    /// blocks instead of growing the file (measured here: 113 µs instead of 165 µs per sync).
    /// 0 turns it off.
    public var preallocationSize: Int = 1 << 20
    /// Where event timestamps come from.
    public var clock: any LogClock = SystemClock()
    /// Create the directory and a new log when there is none.
    public var createIfMissing = true
    /// The 16-byte id given to a log this configuration creates; random when nil. Inject it
    /// (with the clock) to make a new log's bytes exactly repeatable.
    public var newLogID: [UInt8]? = nil

    public init() {}

    func validate() throws {
        func fail(_ message: String) -> LogError { LogError(.invalidArgument, "invalid log configuration: \(message)") }
        if case .interval(let interval) = durability, interval <= .zero { throw fail("the sync interval must be positive") }
        guard ZstdCompressor.levels.contains(compressionLevel) else {
            throw fail("zstd level \(compressionLevel) is outside \(ZstdCompressor.levels)")
        }
        guard segmentSize >= 4096 else { throw fail("segmentSize must be at least 4096 bytes") }
        guard indexInterval >= 1 else { throw fail("indexInterval must be at least 1 byte") }
        guard (1...LogFormat.maxRawLength).contains(maxBatchSize) else {
            throw fail("maxBatchSize must be between 1 byte and 64 MiB")
        }
        guard maxEventSize >= 0, maxEventSize + 20 <= maxBatchSize else {
            throw fail("maxEventSize must leave room for its framing inside maxBatchSize")
        }
        if let newLogID, newLogID.count != LogFiles.logIDSize {
            throw fail("newLogID must be \(LogFiles.logIDSize) bytes")
        }
        guard preallocationSize >= 0 else { throw fail("preallocationSize must not be negative") }
        guard hotTailSegmentSize >= 4096 else { throw fail("hotTailSegmentSize must be at least 4096 bytes") }
        if let tailCheckpointInterval, tailCheckpointInterval < 1 {
            throw fail("tailCheckpointInterval must be at least 1 byte (nil: only at a clean close)")
        }
        guard (1...LogFormat.maxRawLength / 2).contains(blockSize) else {
            throw fail("blockSize must be between 1 byte and 32 MiB")
        }
        if let blockKeys, !blockKeys.isValidName {
            throw fail("a key function's name must be 1 to 16 printable ASCII bytes, not \"\(blockKeys.name.prefix(40))\"")
        }
        guard ZstdCompressor.levels.contains(blockCompressionLevel) else {
            throw fail("zstd level \(blockCompressionLevel) is outside \(ZstdCompressor.levels)")
        }
    }

    var preallocates: Bool { durability == .always && preallocationSize > 0 }
}
