/// One event read back from the log.
///
/// ```swift
/// for event in try reader.events(from: 1) { print(event.sequence, event.timestamp, event.payload.count) }
/// ```
///
/// `payload` is a slice of the decoded batch it came from: reading it costs no copy, and
/// keeping it keeps that batch's buffer alive. Copy it (`Array(event.payload)`) to keep a few
/// events from a large replay.
public struct LogEvent: Hashable, Sendable {
    /// The event's position in the log: 1 for the first, dense and increasing.
    public let sequence: UInt64
    /// When the log appended it.
    public let timestamp: LogTimestamp
    /// The bytes given to `append`, unchanged — unless the event was erased.
    public let payload: ArraySlice<UInt8>
    /// Whether the payload was erased (format 2, docs/FORMAT.md "Erased events"): `payload` then
    /// holds the 32-byte SHA-256 of the payload it had, then what the erase kept
    /// (``erasedDigest``, ``keptBytes``).
    public let isErased: Bool

    public init(sequence: UInt64, timestamp: LogTimestamp, payload: ArraySlice<UInt8>, isErased: Bool = false) {
        precondition(!isErased || LogFormat.erasedLengths.contains(UInt64(payload.count)))
        self.sequence = sequence
        self.timestamp = timestamp
        self.payload = payload
        self.isErased = isErased
    }

    /// An erased event's digest of the payload it had (nil for an event that was not erased).
    public var erasedDigest: ArraySlice<UInt8>? {
        isErased ? payload.prefix(LogFormat.digestSize) : nil
    }

    /// What an erase kept of the event, chosen by the layer above (nil unless erased).
    public var keptBytes: ArraySlice<UInt8>? {
        isErased ? payload.dropFirst(LogFormat.digestSize) : nil
    }

    /// The same event erased, keeping `kept` beside its payload's digest: what an erase would
    /// leave of it, and hashing into the chain exactly as the event does (a copy of another
    /// log can take an event erased, and still have that log's heads). An erased event stays
    /// as it is.
    ///
    /// - Throws: ``LogError`` `.invalidArgument` when `kept` is longer than an erased event keeps.
    public func erased(keeping kept: [UInt8]) throws -> LogEvent {
        guard !isErased else { return self }
        guard kept.count <= LogFormat.maxErasedKept else {
            throw LogError(
                .invalidArgument, "an erased event keeps at most \(LogFormat.maxErasedKept) bytes, not \(kept.count)", sequence: sequence)
        }
        let digest = payload.withUnsafeBytes { EventChain.digest(of: $0) }
        return LogEvent(sequence: sequence, timestamp: timestamp, payload: ArraySlice(digest + kept), isErased: true)
    }
}

/// A position in the log's hash chain: a sequence number that ends a batch, and that batch's
/// SHA-256. Records made beside the log (snapshots, receipts) keep one to prove which history
/// they belong to.
public struct LogHead: Hashable, Sendable {
    public let sequence: UInt64
    public let hash: ChainHash

    public init(sequence: UInt64, hash: ChainHash) {
        self.sequence = sequence
        self.hash = hash
    }
}
