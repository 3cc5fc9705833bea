import Testing

/// Runs a test, or every test of a suite, on `WorkerThreads.shared` rather than the
/// cooperative pool: for tests that run long between suspensions (power cuts at every
/// operation, folds of thousands of events, property tests' many seeds), so that the suite's
/// network tests always find a pool thread (docs/DEVELOPING.md, "Tests and the cooperative pool").
public struct HeavyTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(WorkerThreads.shared) { try await function() }
    }
}

extension Trait where Self == HeavyTrait {
    /// Long file or CPU work: run on threads of its own, not the cooperative pool.
    public static var heavy: Self { HeavyTrait() }
}
