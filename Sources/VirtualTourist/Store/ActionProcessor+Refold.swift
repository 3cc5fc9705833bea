import DeviceLogs
import EventLog

/// A store that takes other devices' events while it is open (a sync through the cluster,
/// docs/SYNC.md) folds its merged history again and adopts the result, between actions.
extension ActionProcessor.ExclusiveAccess {
    /// Makes `fold` the state: the merged history's, with the copies as they are now and this
    /// device's log through its last event. `events` (the ones taken, as they fold) go to the
    /// subscribers with it. A snapshot under way lands first, bound to the state before.
    func adopt(
        _ fold: TouristState, numbering: MergedNumbering, copiedLogs: [MergedFrontier.Log], snapshot: UInt64?, events: [RecordedEvent]
    ) async {
        await snapshotsSettled()
        processor.adopt(fold, numbering: numbering, copiedLogs: copiedLogs, snapshot: snapshot, events: events)
    }
}

extension ActionProcessor {
    fileprivate func adopt(
        _ fold: TouristState, numbering: MergedNumbering, copiedLogs: [MergedFrontier.Log], snapshot: UInt64?, events: [RecordedEvent]
    ) {
        precondition(fold.sequence >= state.sequence, "a refold covers every event the state did, and more")
        state = fold
        scratch = fold
        self.numbering = numbering
        self.copiedLogs = copiedLogs.sorted { $0.device < $1.device }
        merging.withLock { $0 = (numbering.device, numbering.offset) }
        // Positions moved when an event sorted before others: the next snapshot is counted
        // from the one the fold started at.
        shared.withLock { $0.lastSnapshot = snapshot ?? 0 }
        publish(StoreChange(events: events, state: fold), head: shared.withLock { $0.publishedHead })
        startSnapshotIfDue()
    }
}
