import Foundation
import StorageTestSupport
import Testing

/// The heavy tests' trait keeps their bodies off the cooperative pool (docs/DEVELOPING.md,
/// "Tests and the cooperative pool"): a synchronous body, an asynchronous one after it
/// suspends, and the child tasks it starts all run on the heavy tests' threads.
@Suite(.heavy) struct HeavyTraitTests {
    static func onHeavyThread() -> Bool { WorkerThreads.isCurrent }

    @Test func aSynchronousBodyRunsOnTheHeavyThreads() {
        #expect(Self.onHeavyThread(), "ran on \(Thread.current.name ?? "an unnamed thread")")
    }

    @Test func anAsynchronousBodyAndItsChildrenStayThere() async throws {
        #expect(Self.onHeavyThread(), "ran on \(Thread.current.name ?? "an unnamed thread")")
        await Task.yield()  // a suspension: the task comes back through its executor
        #expect(Self.onHeavyThread())
        let children = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { Self.onHeavyThread() } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(children == [true, true, true, true])
    }
}

@Suite struct PoolTraitTests {
    /// The control: without the trait a test is on the pool, so the check above can fail.
    @Test func withoutTheTraitATestIsOnThePool() {
        #expect(!HeavyTraitTests.onHeavyThread())
    }
}
