import EventLog

/// Time travel: the state as it was, the difference between two moments, the story of one pin,
/// and the chain of causes of an event. Each reads the log (and a snapshot) directly; they do
/// I/O on the calling thread and do not disturb the store's actions.
extension TouristStore {
    /// The state after event `sequence` (0: the empty state). Cost: load the nearest snapshot
    /// at or before it, then replay at most about ``StoreOptions/snapshotInterval`` events.
    public func state(at sequence: UInt64) throws -> TouristState {
        let last = lastSequence
        guard sequence <= last else {
            throw DomainError(.invalidArgument, "the log ends at sequence \(last); there is no state at \(sequence)")
        }
        do {
            let reader = try LogReader(directory: logPath, fileSystem: fileSystem)
            let (base, _) = try snapshots.newest(atOrBefore: sequence, reader: reader)
            return try Self.replay(reader, from: base ?? TouristState(), through: sequence).0
        } catch {
            throw Self.storageError(error, "the state at \(sequence) cannot be read")
        }
    }

    /// The sequence number of the last event at or before `time` (0 if none).
    public func sequence(atTime time: LogTimestamp) throws -> UInt64 {
        do {
            let reader = try LogReader(directory: logPath, fileSystem: fileSystem)
            let cursor = try reader.events(since: time.adding(microseconds: 1))
            let last = lastSequence
            guard let after = try cursor.next(), after.sequence <= last else { return last }
            return after.sequence - 1
        } catch {
            throw Self.storageError(error, "the log cannot be searched by time")
        }
    }

    /// The state as it was at `time`.
    public func state(atTime time: LogTimestamp) throws -> TouristState {
        try state(at: sequence(atTime: time))
    }

    /// What changed between the states after `from` and after `to`.
    public func difference(from: UInt64, to: UInt64) throws -> StateDiff {
        try state(at: from).difference(to: state(at: to))
    }

    /// Every event about `pin`, oldest first (empty for a pin that never existed).
    public func history(of pin: PinID) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try forEachEvent(from: state.pins[pin]?.droppedAt ?? 1, through: lastSequence, doing: "the history of pin \(pin) cannot be read") {
            if $0.event.pin == pin { events.append($0) }
        }
        return events
    }

    /// The event at `sequence`, then the event that caused it, and so on to the first cause.
    public func causes(of sequence: UInt64) throws -> [RecordedEvent] {
        guard (1...max(1, lastSequence)).contains(sequence), lastSequence > 0 else {
            throw DomainError(.invalidArgument, "there is no event \(sequence); the log holds 1…\(lastSequence)")
        }
        do {
            let reader = try LogReader(directory: logPath, fileSystem: fileSystem)
            var chain: [RecordedEvent] = []
            var next: UInt64? = sequence
            while let current = next, let event = try reader.event(at: current) {
                let recorded = try EventCodec.decode(event)
                chain.append(recorded)
                // Causes always point backwards; anything else would loop.
                next = recorded.cause.flatMap { $0 < current ? $0 : nil }
            }
            return chain
        } catch {
            throw Self.storageError(error, "the causes of event \(sequence) cannot be read")
        }
    }

    /// Events `from` through `through`, decoded (for inspection tools).
    public func events(from: UInt64 = 1, through: UInt64? = nil) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try forEachEvent(from: from, through: through ?? lastSequence, doing: "the events cannot be read") { events.append($0) }
        return events
    }

    /// Decodes events `from` through `through` one at a time, holding one batch in memory.
    func forEachEvent(from: UInt64, through: UInt64, doing: String, _ body: (RecordedEvent) throws -> Void) throws {
        guard through >= max(1, from) else { return }
        do {
            let reader = try LogReader(directory: logPath, fileSystem: fileSystem)
            let cursor = try reader.events(from: max(1, from), through: through)
            while let event = try cursor.next() { try body(try EventCodec.decode(event)) }
        } catch {
            throw Self.storageError(error, doing)
        }
    }
}
