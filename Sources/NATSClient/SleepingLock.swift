import NIOConcurrencyHelpers

/// A value behind a lock whose waiters sleep at once: a POSIX mutex (`NIOLock`).
///
/// The standard library's `Mutex` spins before it sleeps. Here the lock is taken by the event
/// loop's thread for every reply and by every task that publishes, and with thirty-two photo
/// uploads in flight `perf` found a third of the replicator's CPU spinning in
/// `_MutexHandle._lockSlow` (on a 2-core machine, often for a holder the kernel had preempted),
/// CPU the app's own commits then waited for (docs/REPLICATION.md).
final class SleepingLock<Value: Sendable>: @unchecked Sendable {
    private let lock = NIOLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
