import Crypto
@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import StorageTestSupport
import Testing

/// A format-2 log end to end (FORMAT.md, part "Format 2"): appends as hot-tail records, reads
/// across segments, the chain's head after every event, recovery of a torn tail, corruption
/// named with its place.
@Suite struct Format2LogTests {
    static func format2(clock: TestClock = TestClock(), segmentSize: Int = 4 << 20) -> LogConfiguration {
        var configuration = configuration(clock: clock)
        configuration.hotTailSegmentSize = segmentSize
        configuration.newLogID = Format2CodecTests.logID
        configuration.compactsInBackground = false
        return configuration
    }

    /// Appends `commits` commits of 1, 2 or 3 events, the clock moving a little between them.
    /// Returns every event appended, as (time, payload).
    @discardableResult
    static func fill(_ log: EventLog, clock: TestClock, commits: Int, from first: Int = 0) throws -> [(time: Int64, payload: [UInt8])] {
        var appended: [(time: Int64, payload: [UInt8])] = []
        for commit in first..<first + commits {
            let payloads = (0...(commit % 3)).map { syntheticPayload(UInt64(commit * 3 + $0 + 1)) }
            try log.append(contentsOf: payloads)
            appended += payloads.map { (clock.now().microsecondsSinceEpoch, $0) }
            clock.advance(microseconds: Int64(commit % 5) * 1_000)
        }
        return appended
    }

    /// The log's last event's time as the writer holds it (what a store opening takes instead
    /// of reading the log's end): nil when empty, then the last event's, after appends, after
    /// a reopen (from the hot tail, and from blocks after a compaction), in both formats.
    @Test(arguments: [LogFormatVersion.v1, .v2])
    func theWriterKnowsItsLastEventsTime(_ format: LogFormatVersion) throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = Self.format2(clock: clock, segmentSize: 4096)
        configuration.writesFormatOne = format == .v1
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        #expect(log.lastTimestamp == nil)
        let appended = try Self.fill(log, clock: clock, commits: 40)
        let lastTime = LogTimestamp(microsecondsSinceEpoch: appended.last!.time)
        #expect(log.lastTimestamp == lastTime)
        try log.close()
        func reopened() throws -> LogTimestamp? {
            let log = try EventLog.open(at: folder.path, configuration: configuration)
            defer { try? log.close() }
            #expect(try LogReader(directory: folder.path).event(at: log.lastSequence)?.timestamp == log.lastTimestamp)
            return log.lastTimestamp
        }
        #expect(try reopened() == lastTime)
        if format == .v2 {
            let log = try EventLog.open(at: folder.path, configuration: configuration)
            _ = try log.compact()
            try log.close()
            #expect(try reopened() == lastTime, "from the block files alone")
        }
    }

    /// A cursor following the log meets its end once per commit. The preallocated zeros past
    /// the end (1 MiB ahead) are checked for stray bytes once, not at every end: checked each
    /// time, a replicator read a megabyte a poll and cost more CPU than the app's commits.
    @Test func aCursorFollowingTheLogDoesNotRereadThePreallocatedZerosAtEveryEnd() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock))
        try Self.fill(log, clock: clock, commits: 1)
        let fileSystem = InstrumentedFileSystem()
        let cursor = try LogReader(directory: folder.path, fileSystem: fileSystem).events(from: 1)
        var seen = 0
        while try cursor.next() != nil { seen += 1 }
        let atFirstEnd = fileSystem.bytesRead
        for commit in 1...50 {
            try Self.fill(log, clock: clock, commits: 1, from: commit)
            while try cursor.next() != nil { seen += 1 }
        }
        let events = try readAll(folder.path)
        #expect(seen == events.count)
        let perEnd = (fileSystem.bytesRead - atFirstEnd) / 50
        #expect(perEnd < 256 << 10, "\(perEnd) bytes read per end of the log")
        try log.close()
    }

    @Test(arguments: [4096, 4 << 20])
    func appendsReadBackAcrossSegmentsWithTheChainAfterEveryEvent(_ segmentSize: Int) throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock, segmentSize: segmentSize))
        let appended = try Self.fill(log, clock: clock, commits: 400)
        #expect(log.head.hash.bytes == Format2CodecTests.independentHead(appended, logID: Format2CodecTests.logID))
        try log.close()
        #expect(try LogFormatVersion.of(directory: folder.path) == .v2)
        let segments = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".seg") }
        #expect(segmentSize == 4096 ? segments.count > 3 : segments.count == 1)

        let events = try readAll(folder.path)
        #expect(events.map(\.sequence) == Array(1...UInt64(appended.count)))
        #expect(events.map(\.timestamp.microsecondsSinceEpoch) == appended.map(\.time))
        #expect(events.map { Array($0.payload) } == appended.map(\.payload))

        let reader = try LogReader(directory: folder.path)
        #expect(try reader.lastSequence() == UInt64(appended.count))
        for sequence in [0, 1, 2, 77, 500, appended.count] {
            let expected = Format2CodecTests.independentHead(Array(appended.prefix(sequence)), logID: Format2CodecTests.logID)
            #expect(try reader.head(at: UInt64(sequence))?.hash.bytes == expected, "head at \(sequence)")
        }
        // Looked up on other threads, all at once, as a snapshot's load looks its head up.
        let pending = [0, 1, 2, 77, 500, appended.count].map { (sequence: $0, head: reader.headInBackground(at: UInt64($0))) }
        for (sequence, head) in pending {
            let expected = Format2CodecTests.independentHead(Array(appended.prefix(sequence)), logID: Format2CodecTests.logID)
            #expect(try head.value()?.hash.bytes == expected, "head at \(sequence), in the background")
        }
        #expect(try reader.head(at: UInt64(appended.count + 1)) == nil)
        for sequence: UInt64 in [1, 300, UInt64(appended.count)] {
            #expect(try reader.event(at: sequence).map { Array($0.payload) } == appended[Int(sequence) - 1].payload)
        }
        // From a time: the first event at or after it, and nothing before.
        let middle = appended[appended.count / 2].time
        let since = try reader.events(since: LogTimestamp(microsecondsSinceEpoch: middle))
        let first = try since.next()
        #expect(first?.timestamp.microsecondsSinceEpoch == middle)
        #expect(first.map { appended[Int($0.sequence) - 2].time < middle } == true)

        // Reopening continues the same chain.
        let reopened = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock, segmentSize: segmentSize))
        #expect(reopened.recovery.isClean)
        #expect(reopened.head.hash.bytes == Format2CodecTests.independentHead(appended, logID: Format2CodecTests.logID))
        let more = try Self.fill(reopened, clock: clock, commits: 10, from: 400)
        #expect(reopened.head.hash.bytes == Format2CodecTests.independentHead(appended + more, logID: Format2CodecTests.logID))
        try reopened.close()
        #expect(try readAll(folder.path).count == appended.count + more.count)
    }

    @Test func aFollowerSeesAppendsAsTheyLandAndAcrossRolls() async throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock, segmentSize: 4096))
        let cursor = try LogReader(directory: folder.path).events(from: 1)
        #expect(try cursor.next() == nil)
        var seen = 0
        for round in 0..<5 {
            try Self.fill(log, clock: clock, commits: 40, from: round * 40)
            while let event = try cursor.next() {
                seen += 1
                #expect(event.sequence == UInt64(seen))
            }
        }
        #expect(UInt64(seen) == log.lastSequence)
        try log.close()
    }

    @Test func aTornLastRecordIsCutOnOpenAndReadersStopBeforeIt() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock))
        let appended = try Self.fill(log, clock: clock, commits: 20)
        let headBefore = log.head
        try log.close()
        let segment = folder.sub("00000000000000000001.seg")
        let good = try readBytes(segment)
        // A commit cut short: its head and half its body, then nothing.
        try writeBytes(good + [0x40, 0x00, 0x05, 0x68], to: segment)

        let cursor = try LogReader(directory: folder.path).events(from: 1)
        var read = 0
        while try cursor.next() != nil { read += 1 }
        #expect(read == appended.count)
        #expect(cursor.incompleteTail?.offset == Int64(good.count))

        let reopened = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock))
        #expect(reopened.recovery.cutTail?.offset == Int64(good.count))
        #expect(reopened.recovery.cutTail?.bytes == 4)
        #expect(reopened.head == headBefore)
        try reopened.close()
        #expect(try readBytes(segment) == good)
        #expect(try readAll(folder.path).count == appended.count)
    }

    @Test func aFlippedByteBeforeTheLastRecordIsCorruptionNamedWithItsPlace() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock))
        try Self.fill(log, clock: clock, commits: 20)
        try log.close()
        let segment = folder.sub("00000000000000000001.seg")
        let offset = LogFormat.segmentHeaderSize + 30
        try flipByte(at: offset, in: segment)
        let before = try snapshot(folder.path)
        expectLogError(.corrupt) { _ = try readAll(folder.path) }
        expectLogError(.corrupt) { _ = try EventLog.open(at: folder.path, configuration: Self.format2(clock: clock)) }
        // A head looked up in the background names the damage too.
        expectLogError(.corrupt) {
            _ = try LogReader(directory: folder.path).headInBackground(at: 20).value()
        }
        #expect(try snapshot(folder.path) == before, "a refused open changed files")
        do {
            _ = try readAll(folder.path)
        } catch let error as LogError {
            #expect(error.file == segment)
            #expect(error.offset.map { $0 <= Int64(offset) } == true)
            #expect(error.sequence != nil)
        }
    }
}
