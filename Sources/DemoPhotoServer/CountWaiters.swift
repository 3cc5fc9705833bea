/// Callers waiting for a count (requests held, say) to reach theirs: a test waits for its
/// moment as an event. Kept under its owner's lock; what it returns is resumed outside it.
public struct CountWaiters: Sendable {
    private var waiting: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    public init() {}

    /// Files `continuation` to be resumed once the count reaches `count`; returns true, filing
    /// nothing, when `current` already does (the caller resumes it at once).
    public mutating func enlist(_ continuation: CheckedContinuation<Void, Never>, for count: Int, current: Int) -> Bool {
        if current >= count { return true }
        waiting.append((count, continuation))
        return false
    }

    /// The waiters the count reached now that it is `current`, no longer filed.
    public mutating func reached(_ current: Int) -> [CheckedContinuation<Void, Never>] {
        let due = waiting.filter { $0.count <= current }.map(\.continuation)
        if !due.isEmpty { waiting.removeAll { $0.count <= current } }
        return due
    }

    /// Every waiter, no longer filed (the owner stops: nothing more will come).
    public mutating func all() -> [CheckedContinuation<Void, Never>] {
        defer { waiting = [] }
        return waiting.map(\.continuation)
    }
}
