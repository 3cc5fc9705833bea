import FileIO

/// What a full verification of a log found.
public struct VerificationReport: Sendable {
    /// One thing wrong, and where.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            /// Damage that is not a torn tail: the log is corrupt from here on.
            case corruption
            /// An incomplete last batch: an append in progress, or a crash not yet recovered
            /// (opening the log for writing cuts it).
            case tornTail
            /// An index entry that disagrees with its segment, or a missing index (opening the
            /// log for writing rebuilds it; readers already ignore it).
            case index
            /// A key summary whose checks pass but whose keys are not its blocks' (FORMAT.md,
            /// "Key summaries"): the events are intact, but a question about a key may miss
            /// some. ``LogRepair`` removes it, and the next writer builds it again.
            case keySummary
        }

        /// Damage to the events themselves (corruption or a torn tail), which ``LogRepair``
        /// cuts; index and key-summary problems are of derived files only.
        public var isDamage: Bool { kind == .corruption || kind == .tornTail }

        public var kind: Kind
        public var file: String
        public var offset: Int64?
        /// The sequence number expected at that place.
        public var sequence: UInt64?
        public var message: String

        public var description: String {
            let place = [offset.map { "offset \($0)" }, sequence.map { "sequence \($0)" }].compactMap { $0 }
            return "\(file)\(place.isEmpty ? "" : " (" + place.joined(separator: ", ") + ")"): \(message)"
        }
    }

    /// The log's format (1 when the directory holds no data file yet).
    public var format = LogFormatVersion.v1
    /// Format 1: segments; format 2: hot-tail segments.
    public var segments = 0
    /// Format 1 only.
    public var batches = 0
    /// Format 2: block files, blocks, hot-tail records.
    public var blockFiles = 0
    public var blocks = 0
    public var records = 0
    /// Format 2: bytes of block files, and of hot-tail segments (headers and records).
    public var blockBytes: Int64 = 0
    public var tailBytes: Int64 = 0
    /// Format 2: checkpoints (blocks and segment headers) the chain was checked against.
    public var checkpoints = 0
    /// Format 2: events whose payload was erased (their digests keep the chain).
    public var erasedEvents = 0
    public var events: UInt64 = 0
    /// Bytes of segment data (headers and batches), compressed as stored.
    public var storedBytes: Int64 = 0
    /// Bytes of event records once decompressed.
    public var rawBytes: Int64 = 0
    /// The last sequence number reached by the valid chain from the start.
    public var lastSequence: UInt64 = 0
    /// Format 1: the SHA-256 of the last valid batch; format 2: the event chain's head after the
    /// last valid event. Either commits to everything before it. Record it
    /// elsewhere to later prove that nothing was cut from the end.
    public var headHash: ChainHash?
    public var problems: [Problem] = []
    /// Derived files that fail their own checks (a key summary, a tail checkpoint): readers
    /// do not use them, so they cost only speed, and writers make them again. Not problems:
    /// the log is clean with them.
    public var notes: [String] = []

    public init() {}

    /// True when nothing at all was found wrong.
    public var isClean: Bool { problems.isEmpty }
    /// True when the events are intact (problems of derived files aside).
    public var eventsAreIntact: Bool { !problems.contains(where: \.isDamage) }
}
