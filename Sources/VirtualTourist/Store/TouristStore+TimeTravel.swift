import EventLog

/// Time travel: the state as it was, the difference between two moments, the story of one pin,
/// and the chain of causes of an event. Each reads the log (and a snapshot) through a
/// ``StoreReader`` that ends at the store's last event; they do I/O on the calling thread and do
/// not disturb the store's actions.
extension TouristStore {
    /// A read-only view of the log as far as the store has gone now.
    public func reader() throws -> StoreReader {
        do {
            return StoreReader(
                folder: folder, lastSequence: lastSequence, fileSystem: fileSystem,
                log: try LogReader(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec), snapshots: snapshots,
                merged: try mergedHistory())
        } catch {
            throw Self.storageError(error, "the log of \(folder) cannot be read")
        }
    }

    /// The state after event `sequence` (0: the empty state). Cost: load the nearest snapshot
    /// at or before it, then replay at most about ``StoreOptions/snapshotInterval`` events —
    /// or, when the last state asked for lies a little before `sequence` (the time-travel
    /// slider moving on), replay from that state instead (``TimeTravelMemo``).
    public func state(at sequence: UInt64) throws -> TouristState {
        let reader = try reader()
        let (generation, memo) = timeTravelMemo.withLock { ($0.generation, $0.state) }
        let near = memo.flatMap { $0.sequence <= sequence && sequence - $0.sequence <= TimeTravelMemo.replayRatherThanLoad ? $0 : nil }
        let state = try reader.state(at: sequence, after: near)
        timeTravelMemo.withLock { if $0.generation == generation { $0.state = state } }
        return state
    }

    /// Forgets the remembered state: history is being rewritten (a forget). Called before the
    /// log changes and after, so that a state computed across the change is never kept.
    func forgetTimeTravelMemo() {
        timeTravelMemo.withLock {
            $0.generation += 1
            $0.state = nil
        }
    }

    /// The sequence number of the last event at or before `time` (0 if none).
    public func sequence(atTime time: LogTimestamp) throws -> UInt64 {
        try reader().sequence(atTime: time)
    }

    /// The state as it was at `time`.
    public func state(atTime time: LogTimestamp) throws -> TouristState {
        try reader().state(atTime: time)
    }

    /// What changed between the states after `from` and after `to`.
    public func difference(from: UInt64, to: UInt64) throws -> StateDiff {
        try reader().difference(from: from, to: to)
    }

    /// Every event about `pin`, oldest first (empty for a pin that never existed).
    public func history(of pin: PinID) throws -> [RecordedEvent] {
        try reader().history(of: pin, from: state.pins[pin]?.droppedAt ?? 1)
    }

    /// The event at `sequence`, then the event that caused it, and so on to the first cause.
    public func causes(of sequence: UInt64) throws -> [RecordedEvent] {
        try reader().causes(of: sequence)
    }

    /// Events `from` through `through`, decoded (for inspection tools).
    public func events(from: UInt64 = 1, through: UInt64? = nil) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try reader().forEachEvent(from: from, through: through) { events.append($0) }
        return events
    }

    /// Decodes events `from` through `through` one at a time, holding one batch in memory.
    func forEachEvent(from: UInt64, through: UInt64, doing: String, _ body: (RecordedEvent) throws -> Void) throws {
        try reader().forEachEvent(from: from, through: through, doing: doing, body)
    }
}

/// The last state time travel computed. A slider dragged forward asks for states a little
/// apart; replaying the events between two of them costs less than loading a snapshot of a
/// large store (130,000 photos: about what replaying 100,000 events costs; docs/BENCHMARKS.md),
/// so a state up to ``replayRatherThanLoad`` events on is replayed from the remembered one.
/// One state is kept (the size of the live state). `generation` moves when history is
/// rewritten, so that a state from before a forget is never used or kept after it.
struct TimeTravelMemo {
    static let replayRatherThanLoad: UInt64 = 50_000
    var generation: UInt64 = 0
    var state: TouristState?
}
