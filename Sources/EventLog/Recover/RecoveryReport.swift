/// What opening a log for writing found and did (FORMAT.md, "Recovery and damage").
///
/// ```swift
/// let log = try EventLog.open(at: path)
/// if let cut = log.recovery.cutTail { print(cut) }  // "cut 37 bytes (1 event) …"
/// ```
public struct RecoveryReport: Sendable, Hashable {
    /// The torn tail that was cut off, if the last segment ended in one.
    public var cutTail: TornTail?
    /// Unfinished writes (`*.tmp`) that were deleted.
    public var removedTemporaryFiles: [String] = []
    /// Index files that were missing, damaged or stale and were written again from the data.
    public var rebuiltIndexes: [String] = []
    /// Format 2: whether the chain's head at the end came from the tail checkpoint the last
    /// writer left (FORMAT.md, "Tail checkpoint"), instead of rehashing the active segment; it
    /// is checked in the background before the first append.
    public var usedTailCheckpoint = false

    /// True when the log was closed cleanly: nothing was cut or deleted.
    public var isClean: Bool { cutTail == nil && removedTemporaryFiles.isEmpty }

    public init() {}
}

/// A torn last batch, cut off by recovery and kept in `quarantine/`.
public struct TornTail: Sendable, Hashable, CustomStringConvertible {
    /// The segment it was cut from.
    public var segment: String
    /// Where the cut began: the end of the last valid batch.
    public var offset: Int64
    /// How many bytes were cut.
    public var bytes: Int64
    /// How many events the torn batch held, when its header was intact; nil when the header
    /// itself was incomplete or unreadable.
    public var events: Int?
    /// The sequence number the first lost event would have had.
    public var firstLostSequence: UInt64
    /// Why the bytes were not a valid batch.
    public var reason: String
    /// Where the cut bytes were copied.
    public var copy: String

    public var description: String {
        let eventText = events.map { "\($0) event\($0 == 1 ? "" : "s") from sequence \(firstLostSequence)" }
            ?? "an unreadable batch header"
        return "cut \(bytes) bytes (\(eventText)) at offset \(offset) of \(segment): \(reason); a copy is in \(copy)"
    }
}
