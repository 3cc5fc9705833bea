import DemoLog
import EventLog
import Foundation
import StorageTestSupport
import Synchronization
import Testing

@Suite struct ConcurrencyTests {
    /// A reader beside a writer sees every event, in order, across segment rolls and the
    /// compactions of the sealed segments, and never a half-written batch. It follows the log
    /// (waiting between looks), so it does not spin a core while the writer works.
    @Test func aReaderFollowingAWriterSeesEveryEventInOrder() async throws {
        let directory = TemporaryFolder.made("follow")
        let total: UInt64 = 20_000
        var settings = configuration(durability: .none, segmentSize: 64 << 10)
        settings.compactsInBackground = true  // the reader crosses the compactions' swaps too
        let log = try EventLog.open(at: directory.path, configuration: settings)
        let finished = DispatchSemaphore(value: 0)
        let writer = Thread {
            defer { finished.signal() }
            var next: UInt64 = 1
            while next <= total {
                let count = min(UInt64(next % 5 + 1), total - next + 1)
                guard (try? log.append(contentsOf: (next..<next + count).map(syntheticPayload))) != nil else { return }
                next += count
            }
        }
        writer.start()
        var seen: UInt64 = 0
        for try await event in try LogReader(directory: directory.path).follow(from: 1) {
            #expect(event.sequence == seen + 1)
            #expect(SyntheticEvents.isPayload(event.payload, of: event.sequence))
            seen = event.sequence
            if seen == total { break }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            // Never leave while the writer runs (the directory goes with us).
            Thread { finished.wait(); done.resume() }.start()
        }
        #expect(seen == total)
        // The reader crossed segment rolls and compactions' swaps: the sealed segments became
        // block files. (How many files they make depends on how many segments each compaction
        // found sealed, which is timing: a count of files failed a CI run with 8 of "more than 10".)
        log.waitForBackgroundCompaction()
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.contains { $0.hasSuffix(".blk") }, "\(files.sorted())")
        #expect(try LogReader(directory: directory.path).blockFiles().count >= 1)
        try log.close()
    }

    /// `follow` waits for appends, including before the log exists.
    @Test func followingWaitsForNewAppends() async throws {
        let directory = TemporaryFolder.made("follow-async")
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let reader = try LogReader(directory: directory.path)
        let follower = Task {
            var sequences: [UInt64] = []
            for try await event in reader.follow(from: 1) {
                #expect(SyntheticEvents.isPayload(event.payload, of: event.sequence))
                sequences.append(event.sequence)
                if sequences.count == 500 { break }
            }
            return sequences
        }
        try await Task.sleep(for: .milliseconds(20))
        let log = try EventLog.open(at: directory.path, configuration: configuration(durability: .none, segmentSize: 8192))
        for sequence in 1...500 as ClosedRange<UInt64> {
            try await log.append(syntheticPayload(sequence))
            if sequence % 100 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(try await follower.value == Array(1...500))
        try log.close()
    }

    /// Many threads appending under `.always` get dense, distinct sequence numbers, each event
    /// lands at the number its append returned, and appends that waited shared syncs (each
    /// sync taking 2 ms, as on a disk: see below).
    @Test func concurrentBlockingAppendersShareSyncs() throws {
        let directory = TemporaryFolder.made("group-threads")
        let fileSystem = InstrumentedFileSystem()
        fileSystem.failure = { operation, path, _ in
            if operation == "sync", path.hasSuffix(".seg") { Thread.sleep(forTimeInterval: 0.002) }
            return nil
        }
        let log = try EventLog.open(at: directory.path, configuration: configuration(), fileSystem: fileSystem)
        let threads = 8
        let perThread = 150
        let results = Mutex<[UInt64: [UInt8]]>([:])
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread {
                for index in 0..<perThread {
                    let payload = Array("thread \(thread) append \(index)".utf8)
                    let sequence = try! log.append(payload)
                    results.withLock { $0[sequence] = payload }
                }
                done.leave()
            }.start()
        }
        done.wait()
        try log.close()
        let assigned = results.withLock { $0 }
        let total = threads * perThread
        #expect(assigned.count == total)
        #expect(Set(assigned.keys) == Set(1...UInt64(total)))
        let events = try readAll(directory.path)
        #expect(events.allSatisfy { assigned[$0.sequence] == Array($0.payload) })
        let syncs = fileSystem.count("sync", "seg")
        let records = try LogVerifier.verify(directory: directory.path).records
        #expect(records < total, "group commit put several appends in one hot-tail record")
        #expect(syncs <= records + 2, "one sync per record (plus closing)")
    }

    /// The same with async appenders: they wait suspended, so far more appenders than threads
    /// make progress together without blocking the pool. Each sync of the log takes 2 ms, as on
    /// a disk: in memory (where the suite's folders are, scripts/test) a sync returns before the
    /// next appender arrives, and there would be nothing to share.
    @Test func concurrentAsyncAppendersShareSyncs() async throws {
        let directory = TemporaryFolder.made("group-tasks")
        let disk = InstrumentedFileSystem()
        disk.failure = { operation, path, _ in
            if operation == "sync", path.hasSuffix(".seg") { Thread.sleep(forTimeInterval: 0.002) }
            return nil
        }
        let log = try EventLog.open(at: directory.path, configuration: configuration(), fileSystem: disk)
        let tasks = 64
        let perTask = 20
        let assigned = try await withThrowingTaskGroup(of: [(UInt64, [UInt8])].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var mine: [(UInt64, [UInt8])] = []
                    for index in 0..<perTask {
                        let payload = Array("task \(task) append \(index)".utf8)
                        mine.append((try await log.append(payload), payload))
                    }
                    return mine
                }
            }
            var all: [UInt64: [UInt8]] = [:]
            for try await part in group { for (sequence, payload) in part { all[sequence] = payload } }
            return all
        }
        try log.close()
        #expect(Set(assigned.keys) == Set(1...UInt64(tasks * perTask)))
        #expect(try readAll(directory.path).allSatisfy { assigned[$0.sequence] == Array($0.payload) })
        #expect(try LogVerifier.verify(directory: directory.path).records < tasks * perTask / 4)
    }

    /// Waits until `fileSystem` has synced segments `count` times (the suite's time limit
    /// bounds a hang).
    static func waitForSyncs(_ count: Int, _ fileSystem: InstrumentedFileSystem) async throws {
        await fileSystem.reached("sync", "seg", count: count)
    }

    /// Under `.none` nothing syncs until the log is closed; under `.always` every batch is
    /// synced before its append returns; under `.interval` the writer syncs on its own once the
    /// log's clock has passed the interval, and not before: the test's clock stands still until
    /// the test moves it, so "not yet" is certain, not a matter of how fast the machine is.
    @Test(.timeLimit(.minutes(2))) func eachPolicySyncsWhenItSays() async throws {
        func run(
            _ durability: LogConfiguration.Durability, clock: TestClock = TestClock(),
            between: (InstrumentedFileSystem) async throws -> Void = { _ in }
        ) async throws -> (Int, Int) {
            let directory = TemporaryFolder.made("policy")
            let fileSystem = InstrumentedFileSystem()
            let log = try EventLog.open(
                at: directory.path, configuration: configuration(clock: clock, durability: durability), fileSystem: fileSystem)
            for sequence in 1...20 as ClosedRange<UInt64> { try await log.append(syntheticPayload(sequence)) }
            try await between(fileSystem)
            let beforeClose = fileSystem.count("sync", "seg")
            try log.close()
            return (beforeClose, fileSystem.count("sync", "seg"))
        }
        let always = try await run(.always)
        #expect(always.0 == 20)
        let none = try await run(.none)
        #expect(none == (0, 1))
        let clock = TestClock()
        let interval = try await run(.interval(.milliseconds(250)), clock: clock) { fileSystem in
            #expect(fileSystem.count("sync", "seg") == 0, "no sync before the interval has passed on the log's clock")
            clock.advance(microseconds: 249_999)
            clock.advance(microseconds: 1)
            try await Self.waitForSyncs(1, fileSystem)
        }
        #expect(interval.0 == 1, "one sync for the 20 appends, by the clock, before the close")
    }

    /// A steady stream of appends must not postpone the interval sync: it runs on a deadline.
    /// Each append moves the log's clock a quarter of the interval on, so every fourth one
    /// passes a deadline; each sync is awaited as an event. A flusher that each append
    /// postponed would never reach its deadline, and the test would end at its time limit, failing.
    @Test(.timeLimit(.minutes(2))) func intervalSyncsKeepHappeningUnderASteadyStreamOfAppends() async throws {
        let directory = TemporaryFolder.made("steady")
        let fileSystem = InstrumentedFileSystem()
        let clock = TestClock()
        let log = try EventLog.open(
            at: directory.path, configuration: configuration(clock: clock, durability: .interval(.milliseconds(10))),
            fileSystem: fileSystem)
        var sequence: UInt64 = 1
        for round in 1...5 {
            for _ in 0..<4 {
                try await log.append(syntheticPayload(sequence))
                sequence += 1
                clock.advance(microseconds: 2_500)
            }
            try await Self.waitForSyncs(round, fileSystem)
            #expect(fileSystem.count("sync", "seg") == round, "round \(round): one sync per interval, not one per append")
        }
        try log.close()
    }
}
