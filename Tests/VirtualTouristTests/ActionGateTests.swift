import Synchronization
import Testing
@testable import VirtualTourist

/// The store's admission: actions together, a job alone, in the order they came; closing
/// finishes what came before it and refuses the rest.
@Suite(.timeLimit(.minutes(1))) struct ActionGateTests {
    @Test func aJobWaitsForTheActionsBeforeItAndTheActionsAfterItWaitForTheJob() async throws {
        let gate = ActionGate()
        let order = Notes()

        try await gate.enterAction()
        try await gate.enterAction()  // actions run together
        let job = Task {
            try await gate.enterJob()
            order.note("job")
            gate.leaveJob()
        }
        await gate.waiting(reach: 1)
        let later = Task {
            try await gate.enterAction()
            order.note("later action")
            gate.leaveAction()
        }
        await gate.waiting(reach: 2)
        order.note("first action ends")
        gate.leaveAction()
        order.note("second action ends")
        gate.leaveAction()
        try await job.value
        try await later.value
        #expect(order.all == ["first action ends", "second action ends", "job", "later action"])
    }

    @Test func closingFinishesWhatCameBeforeAndRefusesWhatComesAfter() async throws {
        let gate = ActionGate()
        try await gate.enterJob()
        let waiting = Task {
            try await gate.enterAction()
            gate.leaveAction()
            return "admitted"
        }
        await gate.waiting(reach: 1)
        gate.refuseNew()  // the first half of close(): the second waits for the work already there
        await #expect(throws: DomainError.self) { try await gate.enterAction() }
        let drained = Task { await gate.drained() }
        gate.leaveJob()
        #expect(try await waiting.value == "admitted")
        await drained.value
        await gate.close()
        let error = await #expect(throws: DomainError.self) { try await gate.enterJob() }
        #expect(error?.code == .closed)
    }
}

/// What happened, in order, from any task.
private final class Notes: Sendable {
    private let notes = Mutex<[String]>([])
    func note(_ what: String) { notes.withLock { $0.append(what) } }
    var all: [String] { notes.withLock { $0 } }
}
