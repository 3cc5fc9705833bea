import Foundation
import StorageTestSupport
import Testing

/// The heavy tests' trait keeps their bodies off the cooperative pool (docs/DEVELOPING.md,
/// "Tests and the cooperative pool"): a synchronous body, an asynchronous one after it
/// suspends, and the child tasks it starts all run on the heavy tests' threads.
@Suite(.heavy) struct HeavyTraitTests {
    static func onHeavyThread() -> Bool { WorkerThreads.currentName == "heavy tests" }

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

/// The same for the tests that wait on other processes, on threads apart from the heavy ones.
@Suite(.waitsForProcesses) struct ProcessWaitsTraitTests {
    static func onWaitingThread() -> Bool { WorkerThreads.currentName == "process waits" }

    @Test func aSynchronousBodyRunsOnTheWaitingThreads() {
        #expect(Self.onWaitingThread(), "ran on \(Thread.current.name ?? "an unnamed thread")")
    }

    @Test func anAsynchronousBodyAndItsChildrenStayThere() async throws {
        await Task.yield()
        #expect(Self.onWaitingThread(), "ran on \(Thread.current.name ?? "an unnamed thread")")
        let children = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 { group.addTask { Self.onWaitingThread() } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(children == [true, true, true, true])
    }
}

@Suite struct PoolTraitTests {
    /// The control: without a trait a test is on the pool, so the checks above can fail.
    @Test func withoutTheTraitATestIsOnThePool() {
        #expect(!WorkerThreads.isCurrent)
    }
}
