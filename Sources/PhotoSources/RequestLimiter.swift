import Synchronization

/// At most `limit` requests at once; the others wait in arrival order. Wikimedia asks clients
/// to keep to a few parallel requests, so every request of one Commons source (API calls and
/// thumbnail downloads alike) passes through one of these, whatever the album pipeline's own
/// limit is; the pipeline bounds its downloads with one too. A waiting task that is cancelled
/// leaves the queue at once (`run` throws `.cancelled`, `acquire` `CancellationError`).
///
/// ```swift
/// let limiter = RequestLimiter(limit: 3)
/// let answer = try await limiter.run { try await fetch.get(url, shownURL: shown) }
/// ```
public final class RequestLimiter: Sendable {
    private struct State {
        var available: Int
        var waiting: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID = 0
    }

    public let limit: Int
    private let state: Mutex<State>

    public init(limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State(available: max(1, limit)))
    }

    /// Runs `work` once a turn is free, and frees the turn afterwards.
    public func run<T: Sendable>(_ work: () async throws(PhotoSourceError) -> T) async throws(PhotoSourceError) -> T {
        do { try await acquire() } catch { throw PhotoSourceError(.cancelled, "the request was cancelled while waiting its turn") }
        defer { release() }
        return try await work()
    }

    /// Waits for a turn; pair each successful call with ``release()``.
    public func acquire() async throws {
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

    public func release() {
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
