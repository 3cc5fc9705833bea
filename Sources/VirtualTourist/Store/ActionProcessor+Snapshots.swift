import EventLog

/// Snapshots of the processor's published state: one whenever the log passes a multiple of the
/// interval, written off the action path, never two at once. In a store of several devices they
/// are merged snapshots, bound to the frontier the state folded (docs/FORMAT.md).
extension ActionProcessor {
    /// A published state and what binds a snapshot of it to its history.
    struct SnapshotPoint {
        var state: TouristState
        var head: LogHead
        var frontier: MergedFrontier?
    }

    private static func point(_ shared: Shared) -> SnapshotPoint {
        SnapshotPoint(state: shared.published, head: shared.publishedHead, frontier: shared.publishedFrontier)
    }

    /// Starts writing a snapshot off the action path when the state passed a multiple of the interval.
    func startSnapshotIfDue() {
        // The state that crossed the multiple is the one written first (not whatever is published
        // by the time the task runs), so where snapshots land does not depend on the scheduler.
        let crossed: SnapshotPoint? = shared.withLock { shared in
            guard !shared.snapshotInFlight, isDue(shared) else { return nil }
            shared.snapshotInFlight = true
            return Self.point(shared)
        }
        if let crossed {
            // Encoding and writing a large state takes a while: off the action path. When it is
            // done, the task looks again: if the store crossed another multiple of the interval
            // meanwhile, it snapshots the newest published state too, so no crossing is lost.
            let task = Task.detached { [self] in
                var next = crossed
                while true {
                    let written = writeSnapshot(next)
                    let again: SnapshotPoint? = shared.withLock { shared in
                        shared.snapshotInFlight = written && isDue(shared)
                        return shared.snapshotInFlight ? Self.point(shared) : nil
                    }
                    guard let again else { return }
                    next = again
                }
            }
            shared.withLock { $0.snapshotTask = task }
        }
    }

    /// Writes a snapshot of the published state now (waiting for one in flight, never beside
    /// it) and returns the sequence (or merged position) it covers.
    func snapshotNow() async throws -> UInt64 {
        while true {
            let claimed: SnapshotPoint? = shared.withLock { shared in
                guard !shared.snapshotInFlight else { return nil }
                shared.snapshotInFlight = true
                return Self.point(shared)
            }
            guard let claimed else {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            var failure: (any Error)? = nil
            do { try write(claimed) } catch { failure = error }
            shared.withLock { shared in
                shared.snapshotInFlight = false
                if failure == nil { shared.lastSnapshot = max(shared.lastSnapshot, claimed.state.sequence) }
            }
            if let failure { throw failure }
            return claimed.state.sequence
        }
    }

    /// True when the published state has passed a multiple of the interval that no written
    /// snapshot covers.
    func isDue(_ shared: Shared) -> Bool {
        shared.published.sequence / snapshots.interval > shared.lastSnapshot / snapshots.interval
    }

    /// Writes a snapshot and says whether it was written; a failure is kept for the store's
    /// report, not thrown (snapshots only save replay time). Runs off the action path: it
    /// touches only `snapshots` (immutable) and `shared` (locked).
    func writeSnapshot(_ point: SnapshotPoint) -> Bool {
        var failure: (any Error)? = nil
        do { try write(point) } catch { failure = error }
        shared.withLock { shared in
            if failure == nil { shared.lastSnapshot = max(shared.lastSnapshot, point.state.sequence) }
            if let failure { shared.snapshotFailure = failure }
        }
        return failure == nil
    }

    private func write(_ point: SnapshotPoint) throws {
        if let frontier = point.frontier {
            try snapshots.writeMerged(point.state, frontier: frontier)
        } else {
            try snapshots.write(point.state, head: point.head)
        }
    }
}
