import Testing

/// Runs a test, or every test of a suite, on a `WorkerThreads` of the suite's own rather than
/// the cooperative pool, which has one thread a core (two on CI) and on which the photo
/// services' doubles, the NATS client and the web server answer (docs/DEVELOPING.md, "Tests
/// and the cooperative pool"). The body, the child tasks it starts and the actors it runs go
/// to those threads.
public struct WorkerThreadsTrait: TestTrait, SuiteTrait, TestScoping {
    let threads: WorkerThreads

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(threads) { try await function() }
    }
}

extension Trait where Self == WorkerThreadsTrait {
    /// Long file or CPU work (power cuts at every operation, folds of thousands of events,
    /// property tests' many seeds), on `WorkerThreads.shared`: two such tests on the pool held
    /// both its threads and every network test waited past its limits.
    public static var heavy: Self { WorkerThreadsTrait(threads: .shared) }

    /// Blocked waits for other processes (a `vt` run read to its end, a helper, `mount`), on
    /// `WorkerThreads.processWaits`, apart from the heavy tests' threads so that such a test
    /// never queues behind a power-cut simulation, nor delays one. On the pool each wait held a
    /// thread for as long as the process ran, and a `vt` run that fetches from a server in the
    /// test process held a pool thread while that server answered on the same pool.
    public static var waitsForProcesses: Self { WorkerThreadsTrait(threads: .processWaits) }
}
