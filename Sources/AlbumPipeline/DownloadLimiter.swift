import Synchronization

/// At most `limit` holders at once; the others wait in arrival order. A waiting task that is
/// cancelled leaves the queue at once and throws `CancellationError`.
final class DownloadLimiter: Sendable {
    private struct State {
        var available: Int
        var waiting: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    init(limit: Int) { state = Mutex(State(available: limit)) }

    /// Waits for a turn; pair each successful call with ``release()``.
    func acquire() async throws {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.available > 0 {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiting.append((id, continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
