import Synchronization

/// Admits a store's work in arrival order: actions together (the log groups their events into
/// shared records), a job alone (a forget's rewrite, a replica's batch), once the actions
/// before it are done; actions that come while a job runs or waits, after it. Closing refuses
/// new work and returns once everything admitted or waiting is done.
final class ActionGate: Sendable {
    private struct Entry {
        let isJob: Bool
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var actionsRunning = 0
        var jobRunning = false
        var waiting: [Entry] = []
        var closed = false
        var drained: [CheckedContinuation<Void, Never>] = []
        var lineWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Tests: the watchers whose count the line reached.
        mutating func lineReached() -> [CheckedContinuation<Void, Never>] {
            let due = lineWatchers.filter { $0.count <= waiting.count }.map(\.continuation)
            if !due.isEmpty { lineWatchers.removeAll { $0.count <= waiting.count } }
            return due
        }

        var isIdle: Bool { actionsRunning == 0 && !jobRunning && waiting.isEmpty }

        /// Admits from the front of the line what may run now; returns whom to wake.
        mutating func admit() -> [CheckedContinuation<Void, any Error>] {
            var admitted: [CheckedContinuation<Void, any Error>] = []
            while let next = waiting.first, !jobRunning {
                if next.isJob {
                    guard actionsRunning == 0 else { break }
                    jobRunning = true
                } else {
                    actionsRunning += 1
                }
                admitted.append(waiting.removeFirst().continuation)
            }
            return admitted
        }

        mutating func finishedIfIdle() -> [CheckedContinuation<Void, Never>] {
            guard isIdle else { return [] }
            defer { drained = [] }
            return drained
        }
    }

    private let state = Mutex(State())

    /// Waits for an action's turn. - Throws: ``DomainError`` `.closed` once the store closes.
    func enterAction() async throws { try await enter(isJob: false) }

    /// Waits for a job's turn: every action admitted before it has left, and none runs beside it.
    func enterJob() async throws { try await enter(isJob: true) }

    func leaveAction() { leave { $0.actionsRunning -= 1 } }

    func leaveJob() { leave { $0.jobRunning = false } }

    /// Refuses new work from now on, without waiting.
    func refuseNew() {
        state.withLock { $0.closed = true }
    }

    /// Refuses new work and returns once all admitted and waiting work is done.
    func close() async {
        refuseNew()
        await drained()
    }

    /// Returns once no work is admitted or waiting.
    func drained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.isIdle { return true }
                state.drained.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Tests: returns once `count` entries wait in line (not admitted yet).
    func waiting(reach count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.waiting.count >= count { return true }
                state.lineWatchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func enter(isJob: Bool) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let (refused, admitted, watchers) = state.withLock {
                state -> (Bool, [CheckedContinuation<Void, any Error>], [CheckedContinuation<Void, Never>]) in
                guard !state.closed else { return (true, [], []) }
                state.waiting.append(Entry(isJob: isJob, continuation: continuation))
                let admitted = state.admit()
                return (false, admitted, state.lineReached())
            }
            if refused { continuation.resume(throwing: DomainError(.closed, "the store is closed")) }
            for entry in admitted { entry.resume() }
            for watcher in watchers { watcher.resume() }
        }
    }

    private func leave(_ change: (inout State) -> Void) {
        let (admitted, drained) = state.withLock { state in
            change(&state)
            return (state.admit(), state.finishedIfIdle())
        }
        for entry in admitted { entry.resume() }
        for waiter in drained { waiter.resume() }
    }
}
