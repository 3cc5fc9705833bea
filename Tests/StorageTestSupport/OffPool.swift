import Foundation

/// Runs `work` on a thread of its own: the syncs and checks are long file work, which on the
/// cooperative pool would starve the suite's network tests of threads (docs/DEVELOPING.md).
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Runs `work`, and the tasks it starts that do not say otherwise, on `executor`'s serial queue
/// rather than the cooperative pool: for a test whose async work (a store's actions, its folds
/// and writes) runs long between suspensions, which on the pool would starve the suite's
/// network tests of its two threads (docs/DEVELOPING.md). Tasks that share one executor share
/// its one thread, so they cannot take both cores from the servers beside them either.
public func onQueue<T: Sendable>(_ executor: QueueExecutor, _ work: @Sendable () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(executor) { try await work() }
}

/// A task executor on one serial dispatch queue (not the cooperative pool's threads).
public final class QueueExecutor: TaskExecutor {
    private let queue: DispatchQueue

    public init(label: String) { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
