import DeviceLogs
import EventLog

/// A store that takes other devices' events while it is open (a sync through the cluster,
/// docs/SYNC.md) folds its merged history again and adopts the result, between actions.
extension ActionProcessor.ExclusiveAccess {
    /// Makes `fold` the state: the merged history's, with the copies as they are now and this
    /// device's log through its last event. `events` (the ones taken, as they fold) go to the
    /// subscribers with it. A snapshot under way lands first, bound to the state before.
    /// Recent states to fold again from (``ActionProcessor/keepCheckpoint(_:_:)``).
    var checkpoints: [MergedCheckpoint] { processor.checkpoints }

    func adopt(
        _ fold: TouristState, numbering: MergedNumbering, copiedLogs: [MergedFrontier.Log], snapshot: UInt64?, events: [RecordedEvent],
        historyChangedFrom: UInt64?
    ) async {
        await snapshotsSettled()
        processor.adopt(
            fold, numbering: numbering, copiedLogs: copiedLogs, snapshot: snapshot, events: events, historyChangedFrom: historyChangedFrom)
    }
}

extension ActionProcessor.ExclusiveAccess {
    /// Folds `events` of `device` (taken into its copy, which now ends at `head`) onto the state
    /// as they are, when every one sorts after every event folded so far (what a sync that runs
    /// brings: the other device's newest actions): the merged order is then the old one with
    /// these after it. Nil, with nothing changed, when one sorts earlier or the device is new to
    /// the state: the caller folds again from a snapshot.
    func appendTaken(_ events: [LogEvent], of device: DeviceID, head: LogHead) throws -> [RecordedEvent]? {
        try processor.appendTaken(events, of: device, head: head)
    }
}

extension ActionProcessor {
    fileprivate func appendTaken(_ events: [LogEvent], of device: DeviceID, head: LogHead) throws -> [RecordedEvent]? {
        guard let numbering, let first = events.first, device != numbering.device else { return nil }
        // A device new to this store of several devices starts with its first event.
        let known = copiedLogs.firstIndex { $0.device == device }
        guard known.map({ copiedLogs[$0].last == first.sequence - 1 }) ?? (first.sequence == 1) else { return nil }
        let folded = Self.frontier(numbering, shared.withLock { $0.publishedHead }, copiedLogs)
        let newest = folded.logs.compactMap(\.lastKey).max()
        guard newest.map({ MergeKey(time: first.timestamp, device: device, sequence: first.sequence) > $0 }) ?? true else { return nil }
        var next = state
        var recorded: [RecordedEvent] = []
        recorded.reserveCapacity(events.count)
        for event in events {
            var decoded = try EventCodec.decode(event)
            decoded.origin = EventOrigin(device: device, sequence: event.sequence)
            decoded.sequence = next.sequence + 1
            next.apply(decoded)
            recorded.append(decoded)
        }
        state = next
        scratch = next
        let grown = MergedNumbering(
            device: numbering.device, offset: numbering.offset + UInt64(events.count), runs: numbering.runs, lastTime: numbering.lastTime)
        self.numbering = grown
        let entry = MergedFrontier.Log(device: device, last: head.sequence, lastTime: events.last!.timestamp, head: head.hash.bytes)
        if let known { copiedLogs[known] = entry } else { copiedLogs = (copiedLogs + [entry]).sorted { $0.device < $1.device } }
        merging.withLock { $0 = (grown.device, grown.offset) }
        publish(StoreChange(events: recorded, state: next), head: shared.withLock { $0.publishedHead })
        startSnapshotIfDue()
        return recorded
    }

    /// Keeps two recent states with their frontiers, at least ``checkpointSpacing`` events
    /// apart: events taken a little late (another device's, committed while this one committed
    /// its own) fold again from the nearer, not from a snapshot file.
    func keepCheckpoint(_ state: TouristState, _ frontier: MergedFrontier) {
        guard let newer = checkpoints.last else {
            checkpoints = [MergedCheckpoint(state: state, frontier: frontier)]
            return
        }
        guard state.sequence >= newer.state.sequence + Self.checkpointSpacing || state.sequence < newer.state.sequence else { return }
        checkpoints = [newer, MergedCheckpoint(state: state, frontier: frontier)].filter { $0.state.sequence <= state.sequence }
    }

    /// Events between the checkpoints: a refold replays at most about twice this many, and the
    /// state is copied once for each (its next change copies what a checkpoint still holds).
    static let checkpointSpacing: UInt64 = 1_000

    fileprivate func adopt(
        _ fold: TouristState, numbering: MergedNumbering, copiedLogs: [MergedFrontier.Log], snapshot: UInt64?, events: [RecordedEvent],
        historyChangedFrom: UInt64?
    ) {
        precondition(fold.sequence >= state.sequence, "a refold covers every event the state did, and more")
        state = fold
        scratch = fold
        self.numbering = numbering
        self.copiedLogs = copiedLogs.sorted { $0.device < $1.device }
        merging.withLock { $0 = (numbering.device, numbering.offset) }
        // Positions moved by the events that sorted before others; the snapshots are counted
        // as before (a snapshot past the state's end would never be followed by another).
        shared.withLock { $0.lastSnapshot = min($0.lastSnapshot, fold.sequence) }
        publish(StoreChange(events: events, state: fold, historyChangedFrom: historyChangedFrom), head: shared.withLock { $0.publishedHead })
        startSnapshotIfDue()
    }
}
