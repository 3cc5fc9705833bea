@testable import EventLog
import FileIO
import Foundation
import SeededRandom
import StorageTestSupport
import Synchronization
import Testing

/// Appends the log prepares when their turn comes (`EventLog.append(preparing:settler:)`): the
/// sequence number and time are decided once, on the log's writer; what was accepted is settled
/// before any append returns; a preparation that does not fit waits for the next record.
@Suite(.timeLimit(.minutes(2))) struct PreparedAppendTests {
    /// Keeps what the log tells it, in order.
    final class Recorder: CommitSettler, @unchecked Sendable {
        let outcomes = Mutex<[Result<LogHead, LogError>]>([])
        let accepted = Mutex<[UInt64]>([])
        let preparations = Mutex(0)

        func settle(_ outcome: Result<LogHead, LogError>) { outcomes.withLock { $0.append(outcome) } }

        /// A preparation whose payloads name the sequence number each event gets, `size` bytes each.
        func events(_ count: Int, size: Int = 16) -> @Sendable (CommitSlot) -> PreparedEvents {
            { [self] slot in
                preparations.withLock { $0 += 1 }
                let payloads = (0..<count).map { Self.payload(slot.firstSequence + UInt64($0), size: size) }
                return PreparedEvents(payloads: payloads) { [self] in
                    accepted.withLock { $0.append(contentsOf: (0..<UInt64(count)).map { slot.firstSequence + $0 }) }
                }
            }
        }

        static func payload(_ sequence: UInt64, size: Int) -> [UInt8] {
            var bytes = Array("event \(sequence) ".utf8)
            bytes += [UInt8](repeating: 0x2E, count: max(0, size - bytes.count))
            return bytes
        }
    }

    /// Each prepared event carries the number the log gave it: concurrent appends, mixed with
    /// plain ones (some refused for going back in time), never see a number they do not get.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func everyPreparedEventGetsTheNumberItWasPreparedFor(seed: UInt64) async throws {
        let directory = TemporaryFolder.made("prepared-\(seed)")
        let clock = TestClock()
        let log = try EventLog.open(at: directory.path, configuration: configuration(clock: clock))
        let recorder = Recorder()
        var random = SplitMix(seed: seed)
        let plans = (0..<80).map { _ in (kind: random.next() % 3, count: Int(random.next() % 3) + 1) }
        let early = [LogTimestamp(microsecondsSinceEpoch: 1)]
        try await log.append(Array("start".utf8))  // after it, `early` is before the log's last event
        try await withThrowingTaskGroup(of: Void.self) { group in
            for plan in plans {
                group.addTask {
                    switch plan.kind {
                    case 0: try await log.append(preparing: recorder.events(plan.count), settler: recorder)
                    case 1: _ = try await log.append(contentsOf: [Array("plain".utf8)])
                    default:
                        // Refused by the writer: earlier than the log's last event.
                        await #expect(throws: LogError.self) { try await log.append(contentsOf: [Array("late".utf8)], timestamps: early) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let head = log.head
        try log.close()
        let events = try readAll(directory.path)
        let prepared = events.filter { String(decoding: $0.payload, as: UTF8.self).hasPrefix("event ") }
        #expect(prepared.count == plans.filter { $0.kind == 0 }.map(\.count).reduce(0, +), "seed \(seed)")
        for event in prepared {
            #expect(Array(event.payload) == Recorder.payload(event.sequence, size: 16), "seed \(seed): event \(event.sequence)")
        }
        #expect(recorder.accepted.withLock { $0 }.sorted() == prepared.map(\.sequence), "seed \(seed)")
        // Every settled record ended at a head the log really had; the last at its last head.
        let outcomes = recorder.outcomes.withLock { $0 }
        let heads = try outcomes.map { try $0.get() }
        #expect(heads.map(\.sequence) == heads.map(\.sequence).sorted(), "seed \(seed)")
        let reader = try LogReader(directory: directory.path)
        for settled in heads { #expect(try reader.head(at: settled.sequence) == settled, "seed \(seed)") }
        if let last = heads.last, last.sequence == head.sequence { #expect(last == head) }
    }

    /// The time is decided once, on the writer: the clock's, or the last event's when the clock
    /// went back (an NTP step), so the log's time never goes back and nothing is refused.
    @Test func aClockSteppedBackGivesTheLastEventsTime() async throws {
        let directory = TemporaryFolder.made("prepared-time")
        let clock = TestClock(1_800_000_000_000_000)
        let log = try EventLog.open(at: directory.path, configuration: configuration(clock: clock))
        let recorder = Recorder()
        let slots = Mutex<[CommitSlot]>([])
        let prepare: @Sendable (CommitSlot) -> PreparedEvents = { slot in
            slots.withLock { $0.append(slot) }
            return PreparedEvents(payloads: [Array("x".utf8)]) {}
        }
        try await log.append(preparing: prepare, settler: recorder)
        clock.set(1_700_000_000_000_000)
        try await log.append(preparing: prepare, settler: recorder)
        clock.set(1_900_000_000_000_000)
        try await log.append(preparing: prepare, settler: recorder)
        try log.close()
        #expect(slots.withLock { $0.map(\.time.microsecondsSinceEpoch) }
            == [1_800_000_000_000_000, 1_800_000_000_000_000, 1_900_000_000_000_000])
        #expect(try readAll(directory.path).map(\.timestamp) == slots.withLock { $0.map(\.time) })
    }

    /// Events that do not fit in what is left of the record wait for the next one and are
    /// prepared again; accepted once; what no record can hold is refused and changes nothing.
    @Test func whatDoesNotFitWaitsAndWhatNeverFitsIsRefused() async throws {
        let directory = TemporaryFolder.made("prepared-room")
        var settings = configuration()
        settings.maxBatchSize = 1_200
        settings.maxEventSize = 1_000
        let log = try EventLog.open(at: directory.path, configuration: settings)
        let recorder = Recorder()
        // The first append holds the writer in its preparation until three more wait behind it,
        // so that those three are one group.
        let release = DispatchSemaphore(value: 0)
        let (preparing, preparingNow) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await log.append(preparing: { slot in
                preparingNow.yield()
                release.wait()
                return recorder.events(1, size: 500)(slot)
            }, settler: recorder)
        }
        for await _ in preparing { break }
        let three = (0..<3).map { _ in Task { try await log.append(preparing: recorder.events(1, size: 500), settler: recorder) } }
        await log.core.queued(reach: 3)
        release.signal()
        #expect(try await first.value == 1..<2)
        // 2 × (500 + 20) bytes fit in a 1,200-byte record; the third waits for the next one.
        let ranges = try await three.asyncMap { try await $0.value }
        #expect(Set(ranges) == [2..<3, 3..<4, 4..<5])
        #expect(recorder.preparations.withLock { $0 } == 5, "the third was prepared again for the next record")
        #expect(recorder.outcomes.withLock { $0.compactMap { try? $0.get().sequence } } == [1, 3, 4])
        #expect(recorder.accepted.withLock { $0 } == [1, 2, 3, 4])
        #expect(recorder.outcomes.withLock { $0.count } >= 2)
        let before = try snapshot(directory.path)
        await #expect(throws: LogError.self) { try await log.append(preparing: recorder.events(3, size: 500), settler: recorder) }
        let tooLarge = await #expect(throws: LogError.self) {
            try await log.append(preparing: recorder.events(1, size: 1_001), settler: recorder)
        }
        #expect(tooLarge?.code == .eventTooLarge)
        #expect(recorder.accepted.withLock { $0.count } == 4, "a refused preparation is never accepted")
        #expect(try snapshot(directory.path) == before)
        #expect(try await log.append(preparing: recorder.events(1), settler: recorder) == 5..<6)
        try log.close()
        #expect(try readAll(directory.path).count == 5)
    }

    /// A failed write settles the record as failed and appends nothing; a second preparing
    /// appender is refused.
    @Test func aFailedWriteSettlesAsFailedAndASecondSettlerIsRefused() async throws {
        let directory = TemporaryFolder.made("prepared-fail")
        let fileSystem = InstrumentedFileSystem()
        let log = try EventLog.open(at: directory.path, configuration: configuration(), fileSystem: fileSystem)
        let recorder = Recorder()
        try await log.append(preparing: recorder.events(2), settler: recorder)
        fileSystem.failure = { operation, path, _ in operation == "write" && path.hasSuffix(".seg") ? ENOSPC : nil }
        await #expect(throws: LogError.self) { try await log.append(preparing: recorder.events(1), settler: recorder) }
        fileSystem.failure = nil
        let outcomes = recorder.outcomes.withLock { $0 }
        #expect(outcomes.count == 2)
        #expect((try? outcomes[0].get())?.sequence == 2)
        if case .failure(let error) = outcomes[1] { #expect(error.code == .io) } else { Issue.record("the failed write settled as written") }
        let error = await #expect(throws: LogError.self) { try await log.append(preparing: Recorder().events(1), settler: Recorder()) }
        #expect(error?.code == .invalidArgument)
        #expect(try await log.append(preparing: recorder.events(1), settler: recorder) == 3..<4)
        try log.close()
        #expect(try readAll(directory.path).map(\.sequence) == [1, 2, 3])
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
