@testable import EventLog
import FieldColumns
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// Compaction (FORMAT.md, "Compaction: the swap protocol"): sealed segments become a block
/// file, the events and the chain stay exactly as they were, readers beside it never see an
/// event twice or miss one, and every step's leftovers are recovered.
@Suite struct Format2CompactionTests {
    /// A closed log of 200 commits in 4 KiB hot-tail segments, none compacted, and its configuration.
    static func closedLogOfSegments() throws -> (TemporaryFolder, LogConfiguration) {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let configuration = Format2LogTests.format2(clock: clock, segmentSize: 4096)
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        try Format2LogTests.fill(log, clock: clock, commits: 200)
        try log.close()
        return (folder, configuration)
    }

    /// An open log of `commits` commits in 4 KiB segments, compacted in the background as they seal.
    static func backgroundCompactedLog(commits: Int) throws -> (
        folder: TemporaryFolder, clock: TestClock, log: EventLog, appended: [(time: Int64, payload: [UInt8])]
    ) {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock, segmentSize: 4096)
        configuration.compactsInBackground = true
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        return (folder, clock, log, try Format2LogTests.fill(log, clock: clock, commits: commits))
    }

    static func names(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0 != "LOCK" }.sorted()
    }

    @Test(arguments: [(LogFormat.Layout.rows, false), (.columns, false), (.columns, true)])
    func compactionKeepsEveryEventAndTheChainAndShrinksTheLog(_ layout: LogFormat.Layout, _ fieldColumns: Bool) throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock)
        configuration.blockLayout = layout
        configuration.payloadCodec = fieldColumns ? FieldColumnsCodec() : nil
        configuration.blockSize = 4096
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        var appended = try Format2LogTests.fill(log, clock: clock, commits: 300)
        let before = try readAll(folder.path)
        let report = try log.compact()
        #expect(report.events == UInt64(appended.count))
        #expect(report.segments == 1)
        #expect(report.blocks > 5)
        #expect(report.bytesAfter < report.bytesBefore)
        #expect(try Self.names(folder.path) == ["00000000000000000001.blk", String(format: "%020d.seg", appended.count + 1)])
        #expect(try readAll(folder.path) == before)
        #expect(log.head.hash.bytes == Format2CodecTests.independentHead(appended, logID: Format2CodecTests.logID))

        // Appends go on; a second compaction makes a second block file after the first.
        appended += try Format2LogTests.fill(log, clock: clock, commits: 50, from: 300)
        try log.compact()
        try log.close()
        let files = try Self.names(folder.path)
        #expect(files.filter { $0.hasSuffix(".blk") }.count == 2)
        let reader = try LogReader(directory: folder.path, payloadCodec: configuration.payloadCodec)
        let events = try readAll(folder.path)
        #expect(events.map { Array($0.payload) } == appended.map(\.payload))
        #expect(events.map(\.timestamp.microsecondsSinceEpoch) == appended.map(\.time))
        for sequence in [1, 5, 299, appended.count - 1, appended.count] {
            let expected = Format2CodecTests.independentHead(Array(appended.prefix(sequence)), logID: Format2CodecTests.logID)
            #expect(try reader.head(at: UInt64(sequence))?.hash.bytes == expected, "head at \(sequence)")
        }
        // Looked up on other threads, all at once, as a snapshot's load looks its head up.
        let pending = [1, 5, 299, appended.count - 1, appended.count].map { (sequence: $0, head: reader.headInBackground(at: UInt64($0))) }
        for (sequence, head) in pending {
            let expected = Format2CodecTests.independentHead(Array(appended.prefix(sequence)), logID: Format2CodecTests.logID)
            #expect(try head.value()?.hash.bytes == expected, "head at \(sequence), in the background")
        }
        #expect(try reader.lastSequence() == UInt64(appended.count))
        let since = try reader.events(since: LogTimestamp(microsecondsSinceEpoch: appended[400].time)).next()
        #expect(since?.timestamp.microsecondsSinceEpoch == appended[400].time)

        // Reopened, it continues the same chain.
        let reopened = try EventLog.open(at: folder.path, configuration: configuration)
        #expect(reopened.recovery.isClean)
        #expect(reopened.head.hash.bytes == Format2CodecTests.independentHead(appended, logID: Format2CodecTests.logID))
        try reopened.close()
    }

    @Test func sealedSegmentsAreCompactedInTheBackground() throws {
        let (folder, _, log, appended) = try Self.backgroundCompactedLog(commits: 300)
        log.waitForBackgroundCompaction()
        #expect(log.backgroundCompactions.lastError == nil)
        #expect(!log.backgroundCompactions.reports.isEmpty)
        try log.close()
        #expect(try Self.names(folder.path).contains { $0.hasSuffix(".blk") })
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))
    }

    /// Segments left sealed by an earlier writer (closed before its compaction ran or finished)
    /// are compacted in the background as soon as the log is opened again, without waiting for
    /// a roll; opened with nothing sealed, the log schedules no compaction.
    @Test func segmentsSealedBeforeAnOpenAreCompactedInTheBackground() throws {
        let (folder, configuration) = try Self.closedLogOfSegments()
        let before = try readAll(folder.path).map { Array($0.payload) }
        try #require(try Self.names(folder.path).filter { $0.hasSuffix(".seg") }.count > 2)
        var background = configuration
        background.compactsInBackground = true
        let log = try EventLog.open(at: folder.path, configuration: background)
        log.waitForBackgroundCompaction()
        #expect(log.backgroundCompactions.lastError == nil)
        #expect(log.backgroundCompactions.reports.count == 1)
        try log.close()
        let names = try Self.names(folder.path)
        #expect(names.contains { $0.hasSuffix(".blk") })
        #expect(names.filter { $0.hasSuffix(".seg") }.count == 1, "only the active segment is left: \(names)")
        #expect(try readAll(folder.path).map { Array($0.payload) } == before)

        let again = try EventLog.open(at: folder.path, configuration: background)
        again.waitForBackgroundCompaction()
        #expect(again.backgroundCompactions.reports.isEmpty, "nothing was sealed")
        try again.close()
    }

    /// Closing while background compactions run (each stopped at its next check, or finished)
    /// leaves every event readable, no temporary file, and a log that compacts when asked.
    @Test func closingDuringBackgroundCompactionsLosesNothing() throws {
        let (folder, clock, log, appended) = try Self.backgroundCompactedLog(commits: 3_000)
        try log.close()
        #expect(log.backgroundCompactions.lastError == nil)
        #expect(!(try Self.names(folder.path).contains { $0.hasSuffix(".tmp") }))
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))

        let reopened = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2(clock: clock, segmentSize: 4096))
        #expect(reopened.recovery.isClean)
        try reopened.compact()
        try reopened.close()
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))
        #expect(try Self.names(folder.path).filter { $0.hasSuffix(".seg") }.count == 1)
    }

    @Test func aReaderBesideACompactionSeesEveryEventOnce() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2(clock: clock, segmentSize: 4096))
        try Format2LogTests.fill(log, clock: clock, commits: 200)
        let cursor = try LogReader(directory: folder.path).events(from: 1)
        var seen: [UInt64] = []
        for _ in 0..<100 { if let event = try cursor.next() { seen.append(event.sequence) } }
        try log.compact()
        try Format2LogTests.fill(log, clock: clock, commits: 20, from: 200)
        while let event = try cursor.next() { seen.append(event.sequence) }
        #expect(seen == Array(1...log.lastSequence))
        try log.close()
    }

    @Test func theLeftoversOfAnInterruptedCompactionAreRecovered() throws {
        let (folder, configuration) = try Self.closedLogOfSegments()
        let segments = try snapshot(folder.path).filter { $0.key.hasSuffix(".seg") }
        let expected = try readAll(folder.path)

        // Stopped after the rename, before the segments were removed (step 6).
        let compacting = try EventLog.open(at: folder.path, configuration: configuration)
        try compacting.compact()
        try compacting.close()
        for (name, bytes) in segments where !FileManager.default.fileExists(atPath: folder.sub(name)) {
            try writeBytes(bytes, to: folder.sub(name))
        }
        #expect(try readAll(folder.path) == expected, "readers must hide the segments a block file covers")
        let reopened = try EventLog.open(at: folder.path, configuration: configuration)
        #expect(reopened.recovery.removedTemporaryFiles.count == segments.count)
        try reopened.close()
        #expect(try Self.names(folder.path).filter { $0.hasSuffix(".seg") }.count == 1)
        #expect(try readAll(folder.path) == expected)

        // Stopped before the rename (steps 2–4): a temporary block file, never read, removed.
        try writeBytes([1, 2, 3], to: folder.sub("00000000000000000500.blk.tmp"))
        #expect(try readAll(folder.path) == expected)
        let again = try EventLog.open(at: folder.path, configuration: configuration)
        #expect(again.recovery.removedTemporaryFiles == ["00000000000000000500.blk.tmp"])
        try again.close()
    }

    @Test func aFormatOneLogHasNothingToCompact() throws {
        let folder = TemporaryFolder.made()
        let log = try EventLog.open(at: folder.path, configuration: legacyConfiguration())
        #expect(log.format == .v1)
        expectLogError(.invalidArgument) { try log.compact() }
        try log.close()
    }

    /// Compaction derives the chain from the blocks it wrote and checks it against every chain
    /// head the old files state: a sealed segment whose `chain_before` (checksum mended) is not
    /// where the events before it lead, or a next segment that does not continue where the
    /// sealed ones end, stops it with the file named, and nothing is changed.
    @Test(arguments: [2, -1])
    func aChainHeadTheEventsDoNotReachStopsCompaction(_ tampered: Int) throws {
        let (folder, configuration) = try Self.closedLogOfSegments()
        let names = try Self.names(folder.path)
        #expect(names.count > 4)
        let name = tampered >= 0 ? names[tampered] : names[names.count - 1]
        let path = folder.path + "/" + name
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[LogFormat.segmentChainBeforeOffset] ^= 0x40
        bytes.setLittleEndian(CRC32C.checksum(bytes[0..<LogFormat.segmentHeaderCRCOffset]), at: LogFormat.segmentHeaderCRCOffset)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let active = UInt64(names[names.count - 1].prefix(20))!

        let error = #expect(throws: LogError.self) {
            try Compaction.compact(directory: folder.path, configuration: configuration, fileSystem: PosixFileSystem(), before: active)
        }
        #expect(error?.code == .corrupt)
        #expect(error?.file == path)
        #expect(error?.message.contains(tampered >= 0 ? "does not continue the segment before it" : "does not continue the chain where") == true)
        #expect(try Self.names(folder.path) == names)
    }

    /// A closing log stops a background compaction instead of waiting for it: asked to stop,
    /// a compaction throws before its swap, leaves no temporary file, and the segments stay the
    /// log, whole, for a later compaction.
    @Test func aCancelledCompactionChangesNothing() throws {
        let (folder, configuration) = try Self.closedLogOfSegments()
        let names = try Self.names(folder.path)
        let expected = try readAll(folder.path)
        let active = UInt64(names[names.count - 1].prefix(20))!
        var asked = 0
        #expect(throws: CompactionCancelled.self) {
            try Compaction.compact(
                directory: folder.path, configuration: configuration, fileSystem: PosixFileSystem(), before: active,
                isCancelled: {
                    asked += 1
                    return true
                })
        }
        #expect(asked == 1)
        #expect(try Self.names(folder.path) == names)
        #expect(try readAll(folder.path) == expected)

        let report = try Compaction.compact(directory: folder.path, configuration: configuration, fileSystem: PosixFileSystem(), before: active)
        #expect(report.segments == names.filter { $0.hasSuffix(".seg") }.count - 1)
        #expect(try readAll(folder.path) == expected)
    }
}
