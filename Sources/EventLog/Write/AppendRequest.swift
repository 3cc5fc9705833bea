import FileIO

/// One append waiting for (or done by) a group commit.
final class AppendRequest {
    let payloads: [[UInt8]]
    /// Explicit timestamps (import); nil means "the clock's reading when written".
    let timestamps: [LogTimestamp]?
    /// A request with no events that asks for a sync (``EventLog/sync()``, the interval flusher).
    let isSync: Bool
    /// Raw bytes this request adds to a batch, framing included (an upper bound).
    let rawSize: Int
    /// Set by the leader that wrote (or refused) the request, under the group-commit lock.
    var result: Result<Range<UInt64>, LogError>?
    /// An async appender parks here until its request has a result.
    var continuation: CheckedContinuation<Void, Never>?
    /// A request with no events that asks a format-2 writer to seal its active segment (so that
    /// compaction can take everything written so far).
    let isRoll: Bool
    /// Events another copy of the log chained, to be taken as a block file after the last event
    /// (format 2; ``EventLog/appendAsBlock(_:)``). Nil for every other request.
    let sealed: [LogEvent]?
    /// True when a thread is blocked waiting for this request (it can lead itself); false for
    /// async appends and the background syncs, which the writer thread leads.
    var hasBlockedCaller = false

    /// The refusal of an append whose first time is earlier than the log's last event.
    func refusal(startingAt first: LogTimestamp, before last: LogTimestamp) -> LogError {
        timestamps == nil
            ? LogError(
                .clockWentBackwards,
                "the clock reads \(first), earlier than the log's last event (\(last)); nothing was appended."
                    + " Wait until the clock passes that time, or fix the clock")
            : LogError(
                .invalidArgument,
                "the events' timestamps start at \(first), earlier than the log's last event (\(last)); nothing was appended")
    }

    init(payloads: [[UInt8]], timestamps: [LogTimestamp]?, isSync: Bool = false, isRoll: Bool = false) {
        self.payloads = payloads
        self.timestamps = timestamps
        self.isSync = isSync
        self.isRoll = isRoll
        self.sealed = nil
        self.rawSize = payloads.reduce(0) { $0 + $1.count + 2 * LogFiles.maxVarintLength }
    }

    /// A request to take `events` as a block file (they are not payloads of a record).
    init(sealing events: [LogEvent]) {
        payloads = []
        timestamps = nil
        isSync = false
        isRoll = false
        sealed = events
        rawSize = events.reduce(0) { $0 + $1.payload.count }
    }
}
