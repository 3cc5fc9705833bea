import Testing

/// Runs a test, or every test of a suite, on `WorkerThreads.processWaits` rather than the
/// cooperative pool: for tests that wait, blocked, for another process (a `vt` run read to its
/// end, a helper, `mount`). Each such wait held one of the pool's two threads for as long as
/// the process ran; two at once stop every network test, and a `vt` run that fetches from a
/// double in the test process holds a pool thread while the double answers on that same pool
/// (docs/DEVELOPING.md, "Tests and the cooperative pool").
///
/// Apart from the heavy tests' threads, so that a test waiting on a process never queues
/// behind a power-cut simulation, nor delays one.
public struct ProcessWaitsTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(WorkerThreads.processWaits) { try await function() }
    }
}

extension Trait where Self == ProcessWaitsTrait {
    /// Blocked waits for other processes: run on threads of their own, not the cooperative pool.
    public static var waitsForProcesses: Self { ProcessWaitsTrait() }
}
