import DeviceLogs
import EventLog
import FileIO

/// Where a fold of the merged history starts: the newest merged snapshot that is still a prefix
/// of the merged order the logs give now (docs/FORMAT.md, "Merged snapshot file": when a reader
/// uses one), else the first event.
extension MergedHistory {
    struct Start {
        /// Nil when only the snapshot's frontier was read (``start(atOrBefore:stateAbove:pinsOnly:)``).
        private(set) var state: TouristState?
        /// Per log (in ``MergedHistory/logs`` order): the events already folded.
        var folded: [UInt64]
        var runs: [MergedFrontier.Run]
        var frontier: MergedFrontier?
        /// The position of the snapshot started from (nil: the first event).
        var snapshot: UInt64? { frontier?.position }
        var position: UInt64 { frontier?.position ?? 0 }
        var resumption: (position: UInt64, folded: [UInt64]) { (position, folded) }

        /// The state, handed over once: kept here too, it would be copied whole by the first
        /// event folded onto it.
        mutating func takeState() -> TouristState? {
            defer { state = nil }
            return state
        }
    }

    /// The newest snapshot at or before `limit` that the logs still begin with, and the ones
    /// passed over and why (a late event before their end is not damage: the fork). Merged
    /// snapshots, and the `.snap` files of this device's log from before it knew another device:
    /// those are merged snapshots of one log (``merged(_:of:at:)``). A snapshot at or before
    /// `stateAbove` (a state the caller holds already) gives its frontier alone: where to go on
    /// reading, without loading a state the caller does not need.
    func start(atOrBefore limit: UInt64, stateAbove: UInt64? = nil, pinsOnly: Bool = false) throws -> (Start, [SkippedSnapshot]) {
        let first = Start(state: TouristState(localDevice: local), folded: logs.map { _ in 0 }, runs: [], frontier: nil)
        guard let snapshots else { return (first, []) }
        var skipped: [SkippedSnapshot] = []
        let candidates = try snapshots.mergedPositions().map { ($0, true) } + snapshots.sequences().map { ($0, false) }
        for (position, isMerged) in candidates.sorted(by: { $0.0 > $1.0 }) where position <= limit {
            let name = isMerged ? MergedSnapshotFile.name(for: position) : SnapshotFile.name(for: position)
            var folded: [UInt64] = []
            do {
                if let stateAbove, position <= stateAbove {
                    let frontier = try isMerged
                        ? snapshots.loadMergedFrontier(position)
                        : oneLogFrontier(at: position, head: snapshots.header(of: position).batchHash)
                    folded = try self.folded(by: frontier)
                    return (Start(state: nil, folded: folded, runs: frontier.runs, frontier: frontier), skipped)
                }
                var frontier: MergedFrontier, state: TouristState
                if isMerged {
                    (frontier, state) = try snapshots.loadMerged(position, pinsOnly: pinsOnly) { frontier in
                        folded = try self.folded(by: frontier)
                    }
                } else {
                    let (header, loaded) = try snapshots.load(position, pinsOnly: pinsOnly)
                    frontier = try oneLogFrontier(at: position, head: header.batchHash)
                    folded = try self.folded(by: frontier)
                    state = Self.merged(loaded, of: local)
                }
                // The state's device is the frontier's, which the snapshot's payload leaves out.
                state.localDevice = frontier.local
                return (Start(state: state, folded: folded, runs: frontier.runs, frontier: frontier), skipped)
            } catch let problem as SnapshotProblem {
                skipped.append(SkippedSnapshot(file: Path.join(snapshots.path, name), reason: problem.description))
            }
        }
        return (first, skipped)
    }

    /// Where a fold starts from a state the caller holds with its frontier (an open store keeps a
    /// recent one in memory: ``ActionProcessor``): the newest of `checkpoints` that the logs still
    /// begin with; nil when none is, or none is given.
    func start(fromNewestOf checkpoints: [MergedCheckpoint]) throws -> Start? {
        for checkpoint in checkpoints.sorted(by: { $0.state.sequence > $1.state.sequence }) {
            do {
                let folded = try self.folded(by: checkpoint.frontier)
                return Start(state: checkpoint.state, folded: folded, runs: checkpoint.frontier.runs, frontier: checkpoint.frontier)
            } catch is SnapshotProblem {
                continue  // an event taken since sorts before its end: an older one, or the files
            }
        }
        return nil
    }

    /// The frontier of a `.snap` of this device's log: its first `sequence` events, and nothing
    /// of the others'.
    private func oneLogFrontier(at sequence: UInt64, head: [UInt8]) throws -> MergedFrontier {
        guard sequence > 0, let own = logs.first(where: { $0.device == local }), let last = try reader(own).event(at: sequence) else {
            throw SnapshotProblem("this device's log does not reach its event \(sequence)")
        }
        var logs = logs.filter { $0.device != local }.map {
            MergedFrontier.Log(device: $0.device, last: 0, lastTime: LogTimestamp(microsecondsSinceEpoch: 0), head: [UInt8](repeating: 0, count: 32))
        }
        logs.append(MergedFrontier.Log(device: local, last: sequence, lastTime: last.timestamp, head: head))
        return MergedFrontier(
            local: local, logs: logs.sorted { $0.device < $1.device },
            runs: [MergedFrontier.Run(position: 1, first: 1, count: sequence)])
    }

    /// A state folded from `device`'s log alone, as a store of one device folds it, made the
    /// merged fold of the same events: there every event has its device, and an album's request
    /// names the device that made it (docs/DEVICES.md, "Rules by intent"); positions are the
    /// log's sequence numbers while no other device's event comes before.
    static func merged(_ state: TouristState, of device: DeviceID) -> TouristState {
        var state = state
        state.localDevice = device
        state.pins.modifyAll { pin in
            if pin.album.request != nil { pin.album.requestedBy = device }
        }
        return state
    }

    /// Per log, the events `frontier` folded, when its state is the fold of this history's
    /// first `frontier.position` events; else why not.
    func folded(by frontier: MergedFrontier) throws -> [UInt64] {
        guard frontier.local == local else { throw SnapshotProblem("it was written by device \(frontier.local), not this one") }
        var folded = logs.map { _ in UInt64(0) }
        for entry in frontier.logs where entry.last > 0 {
            guard let index = logs.firstIndex(where: { $0.device == entry.device }) else {
                throw SnapshotProblem("it folded device \(entry.device)'s log, which this store does not hold")
            }
            guard logs[index].last >= entry.last else {
                throw SnapshotProblem("it folded device \(entry.device)'s log through \(entry.last), and the log ends at \(logs[index].last)")
            }
            guard try reader(logs[index]).head(at: entry.last)?.hash.bytes == entry.head else {
                throw SnapshotProblem("it was taken from another history of device \(entry.device)'s log (its head at \(entry.last) differs)")
            }
            folded[index] = entry.last
        }
        guard let greatest = frontier.greatestKey else { return folded }
        for (index, log) in logs.enumerated() where log.last > folded[index] {
            guard let next = try reader(log).event(at: folded[index] + 1) else {
                throw SnapshotProblem("device \(log.device)'s log has no event \(folded[index] + 1)")
            }
            let key = MergeKey(time: next.timestamp, device: log.device, sequence: next.sequence)
            guard greatest < key else {
                throw SnapshotProblem(
                    "device \(log.device)'s event \(next.sequence), copied since, belongs before its last event in the merged order (the fold restarts before it)")
            }
        }
        return folded
    }
}

/// A state of an open store of several devices and the events it folded, kept in memory so that
/// events taken from another device that sort a little before the newest ones fold again from
/// here rather than from a snapshot file (docs/SYNC.md, "Taking another device's events").
struct MergedCheckpoint: Sendable {
    var state: TouristState
    var frontier: MergedFrontier
}
