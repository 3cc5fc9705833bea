import EventLog

/// Snapshots of the processor's published state: one whenever the log passes a multiple of the
/// interval, written off the action path, never two at once.
extension ActionProcessor {
    /// Starts writing a snapshot off the action path when the state passed a multiple of the interval.
    func startSnapshotIfDue() {
        guard localDevice == nil else { return }  // no merged snapshots yet (docs/DEVICES.md)
        // The state that crossed the multiple is the one written first (not whatever is published
        // by the time the task runs), so where snapshots land does not depend on the scheduler.
        let crossed: (TouristState, LogHead)? = shared.withLock { shared in
            guard !shared.snapshotInFlight, isDue(shared) else { return nil }
            shared.snapshotInFlight = true
            return (shared.published, shared.publishedHead)
        }
        if let crossed {
            // Encoding and writing a large state takes a while: off the action path. When it is
            // done, the task looks again: if the store crossed another multiple of the interval
            // meanwhile, it snapshots the newest published state too, so no crossing is lost.
            let task = Task.detached { [self] in
                var next = crossed
                while true {
                    let written = writeSnapshot(next.0, next.1)
                    let again: (TouristState, LogHead)? = shared.withLock { shared in
                        shared.snapshotInFlight = written && isDue(shared)
                        return shared.snapshotInFlight ? (shared.published, shared.publishedHead) : nil
                    }
                    guard let again else { return }
                    next = again
                }
            }
            shared.withLock { $0.snapshotTask = task }
        }
    }

    /// Writes a snapshot of the published state now (waiting for one in flight, never beside
    /// it) and returns the sequence it covers.
    func snapshotNow() async throws -> UInt64 {
        guard localDevice == nil else {
            throw DomainError(
                .invalidArgument,
                "snapshots of a store of several devices are not built yet (docs/DEVICES.md, \"What is built\"): it replays every device's log when it opens")
        }
        while true {
            let claimed: (TouristState, LogHead)? = shared.withLock { shared in
                guard !shared.snapshotInFlight else { return nil }
                shared.snapshotInFlight = true
                return (shared.published, shared.publishedHead)
            }
            guard let (state, head) = claimed else {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            var failure: (any Error)? = nil
            do { try snapshots.write(state, head: head) } catch { failure = error }
            shared.withLock { shared in
                shared.snapshotInFlight = false
                if failure == nil { shared.lastSnapshot = max(shared.lastSnapshot, state.sequence) }
            }
            if let failure { throw failure }
            return state.sequence
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
    func writeSnapshot(_ state: TouristState, _ head: LogHead) -> Bool {
        var failure: (any Error)? = nil
        do { try snapshots.write(state, head: head) } catch { failure = error }
        shared.withLock { shared in
            if failure == nil { shared.lastSnapshot = max(shared.lastSnapshot, state.sequence) }
            if let failure { shared.snapshotFailure = failure }
        }
        return failure == nil
    }
}
