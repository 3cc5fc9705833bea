import FileIO

/// One append waiting for (or done by) a group commit.
final class AppendRequest {
    /// A prepared request's are filled in by the leader from its ``prepare``.
    var payloads: [[UInt8]]
    /// Explicit timestamps (import, a prepared request's slot); nil means "the clock's reading
    /// when written".
    var timestamps: [LogTimestamp]?
    /// A request with no events that asks for a sync (``EventLog/sync()``, the interval flusher).
    let isSync: Bool
    /// Raw bytes this request adds to a batch, framing included (an upper bound); 0 for a
    /// prepared request until it is prepared.
    let rawSize: Int
    /// A request whose events depend on where they land (``EventLog/append(preparing:settler:)``):
    /// the leader prepares it when its turn comes, and tells `settler` how its record ended.
    let prepare: (@Sendable (CommitSlot) -> PreparedEvents)?
    let settler: (any CommitSettler)?
    /// Set by the leader when the prepared events cannot be appended at all (too large).
    var refusal: LogError?
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
        self.rawSize = Self.rawSize(of: payloads)
        self.prepare = nil
        self.settler = nil
    }

    /// A request prepared by the leader, when its turn comes.
    init(preparing prepare: @escaping @Sendable (CommitSlot) -> PreparedEvents, settler: any CommitSettler) {
        payloads = []
        timestamps = nil
        isSync = false
        isRoll = false
        sealed = nil
        rawSize = 0
        self.prepare = prepare
        self.settler = settler
    }

    /// Raw bytes `payloads` add to a record or batch, framing included (an upper bound).
    static func rawSize(of payloads: [[UInt8]]) -> Int {
        payloads.reduce(0) { $0 + $1.count + 2 * LogFiles.maxVarintLength }
    }

    /// True for a request that takes no sequence numbers: a sync, a roll, an empty append. It
    /// may share a group with plain and with prepared requests.
    var takesNoEvents: Bool { prepare == nil && sealed == nil && payloads.isEmpty }

    /// A request to take `events` as a block file (they are not payloads of a record).
    init(sealing events: [LogEvent]) {
        payloads = []
        timestamps = nil
        isSync = false
        isRoll = false
        sealed = events
        rawSize = events.reduce(0) { $0 + $1.payload.count }
        prepare = nil
        settler = nil
    }
}
