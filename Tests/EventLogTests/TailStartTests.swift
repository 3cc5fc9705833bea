@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// The start in a tail checkpoint (FORMAT.md, "Tail checkpoint": the start): where the writer
/// that left it started appending. An open after a crash hands it on (`EventLog.tailStart`),
/// unchecked like the checkpoint's head, and the background check compares it too.
@Suite struct TailStartTests {
    /// Segments of 1 MiB: the 740 commits here stay in one.
    static func configuration(_ clock: TestClock, segmentSize: Int = 1 << 20) -> LogConfiguration {
        var configuration = Format2LogTests.format2(clock: clock, segmentSize: segmentSize)
        configuration.tailCheckpointInterval = 2 << 10
        return configuration
    }

    /// A log closed cleanly, reopened, written to with running checkpoints, and copied as a
    /// crash leaves it (the lock removed); the head where the reopen started, and the live log.
    static func crashAfterReopen(
        _ folder: TemporaryFolder, _ crashed: TemporaryFolder, clock: TestClock, commits: Int = 40,
        segmentSize: Int = 1 << 20
    ) throws -> (start: LogHead, live: EventLog) {
        let configuration = configuration(clock, segmentSize: segmentSize)
        let first = try EventLog.open(at: folder.path, configuration: configuration)
        try Format2LogTests.fill(first, clock: clock, commits: 700)
        try first.close()
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        let start = log.head
        try Format2LogTests.fill(log, clock: clock, commits: commits, from: 700)
        try copyDirectory(folder.path, to: crashed.path)
        try? FileManager.default.removeItem(atPath: crashed.sub(LogFiles.lockFileName))
        return (start, log)
    }

    /// Changes the checkpoint at `path` and makes its checksum hold again.
    static func rewrite(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = try readBytes(path)
        change(&bytes)
        bytes.setLittleEndian(CRC32C.checksum(bytes[0..<TailCheckpoint.crcOffset]), at: TailCheckpoint.crcOffset)
        try writeBytes(bytes, to: path)
    }

    @Test func checkpointsRoundTripWithAndWithoutAStartAndVersionOneStillReads() throws {
        let header = TailSegmentHeader(
            firstSequence: 101, logID: Array(repeating: 7, count: 16), createdAt: LogTimestamp(microsecondsSinceEpoch: 5),
            timeBefore: 1_000, chainBefore: ChainHash(bytes: Array(repeating: 1, count: 32)), origin: .none)
        let start = TailCheckpoint.Point(dataEnd: 300, nextSequence: 120, lastTime: 1_500, chain: ChainHash(bytes: Array(repeating: 3, count: 32)))
        var checkpoint = TailCheckpoint(
            firstSequence: 101, logID: header.logID, dataEnd: 900, nextSequence: 180, lastTime: 2_000,
            chain: ChainHash(bytes: Array(repeating: 2, count: 32)), start: start)
        #expect(checkpoint.encoded().count == TailCheckpoint.size)
        #expect(TailCheckpoint.decode(checkpoint.encoded(), for: header) == checkpoint)
        checkpoint.start = nil
        #expect(TailCheckpoint.decode(checkpoint.encoded(), for: header) == checkpoint)

        // Version 1: the first 96 bytes, its version, and its checksum at 96.
        var one = Array(checkpoint.encoded()[0..<96])
        one.setLittleEndian(UInt16(1), at: 8)
        one.appendLittleEndian(CRC32C.checksum(one))
        #expect(TailCheckpoint.decode(one, for: header) == checkpoint)
        var three = checkpoint.encoded()
        three.setLittleEndian(UInt16(3), at: 8)
        three.setLittleEndian(CRC32C.checksum(three[0..<TailCheckpoint.crcOffset]), at: TailCheckpoint.crcOffset)
        #expect(TailCheckpoint.decode(three, for: header) == nil)
        #expect(TailCheckpoint.decode(Array(checkpoint.encoded().dropLast()), for: header) == nil)

        // A start that breaks a rule is left out; the rest of the checkpoint stands.
        let broken = [
            TailCheckpoint.Point(dataEnd: 901, nextSequence: 120, lastTime: 1_500, chain: start.chain),
            TailCheckpoint.Point(dataEnd: 10, nextSequence: 120, lastTime: 1_500, chain: start.chain),
            TailCheckpoint.Point(dataEnd: 300, nextSequence: 181, lastTime: 1_500, chain: start.chain),
            TailCheckpoint.Point(dataEnd: 300, nextSequence: 100, lastTime: 1_500, chain: start.chain),
            TailCheckpoint.Point(dataEnd: 300, nextSequence: 120, lastTime: 2_001, chain: start.chain),
            TailCheckpoint.Point(dataEnd: 300, nextSequence: 120, lastTime: 999, chain: start.chain),
        ]
        for wrong in broken {
            checkpoint.start = wrong
            var expected = checkpoint
            expected.start = nil
            #expect(TailCheckpoint.decode(checkpoint.encoded(), for: header) == expected, "\(wrong)")
        }
    }

    /// After a crash, the open finds the head where the crashed writer started; the check passes
    /// and appends go on; the log verifies.
    @Test func anOpenAfterACrashFindsWhereTheLastWriterStarted() throws {
        let folder = TemporaryFolder.made(), crashed = TemporaryFolder.made()
        let clock = TestClock()
        let (start, live) = try Self.crashAfterReopen(folder, crashed, clock: clock)
        defer { try? live.close() }
        let log = try EventLog.open(at: crashed.path, configuration: Self.configuration(clock))
        #expect(log.recovery.usedTailCheckpoint)
        let position = try #require(log.tailStart)
        #expect(position.head == start && start.sequence < log.lastSequence)
        let reader = try LogReader(directory: crashed.path)
        #expect(try reader.head(at: start.sequence) == start)
        // A read from the start finds what a read from the segment's first record finds.
        let fromStart = try reader.events(from: start.sequence + 1, through: nil, startingAt: position)
        let plain = try reader.events(from: start.sequence + 1)
        var count = 0
        while let event = try fromStart.next() {
            #expect(try plain.next() == event)
            count += 1
        }
        #expect(try plain.next() == nil && UInt64(count) == log.lastSequence - start.sequence)
        try log.append([4, 4, 4])
        try log.close()
        #expect(try LogVerifier.verify(directory: crashed.path).isClean)
    }

    /// An open and a close with nothing appended leave the checkpoint as they found it, start
    /// and all (a store opened for a question and closed must leave its files as they were);
    /// after an append the start is where that writer began.
    @Test func anOpenWithoutAppendsLeavesTheCheckpointAsItWas() throws {
        let folder = TemporaryFolder.made(), crashed = TemporaryFolder.made()
        let clock = TestClock()
        let (_, live) = try Self.crashAfterReopen(folder, crashed, clock: clock)
        try live.close()
        let path = try TailCheckpointTests.checkpointPath(folder)
        let closed = try readBytes(path)
        let idle = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        try idle.close()
        #expect(try readBytes(path) == closed)
        let busy = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        let opened = busy.head
        try busy.append([9])
        try busy.close()
        let reopened = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(reopened.tailStart?.head == opened)
        try reopened.close()
    }

    /// A writer that rolled to a new segment since it started leaves no start.
    @Test func aWriterThatRolledLeavesNoStart() throws {
        let folder = TemporaryFolder.made(), crashed = TemporaryFolder.made()
        let clock = TestClock()
        let (_, live) = try Self.crashAfterReopen(folder, crashed, clock: clock, commits: 900, segmentSize: 64 << 10)
        defer { try? live.close() }
        let written = try readBytes(try TailCheckpointTests.checkpointPath(crashed))
        #expect(written[96..<152].allSatisfy { $0 == 0 }, "no start written")
        let log = try EventLog.open(at: crashed.path, configuration: Self.configuration(clock, segmentSize: 64 << 10))
        #expect(log.recovery.usedTailCheckpoint)
        #expect(log.tailStart == nil)
        try log.close()
    }

    /// A start whose head is wrong is handed on, caught by the check before the first append,
    /// and the reopen rehashes; a start that is not a record boundary is not handed on.
    @Test func aWrongStartIsCaughtAndOneInsideARecordIsNotUsed() throws {
        let folder = TemporaryFolder.made(), crashed = TemporaryFolder.made()
        let clock = TestClock()
        let (start, live) = try Self.crashAfterReopen(folder, crashed, clock: clock)
        try live.close()
        let path = try TailCheckpointTests.checkpointPath(crashed)
        try Self.rewrite(path) { $0[120] ^= 0x01 }  // the start's chain
        let forged = try EventLog.open(at: crashed.path, configuration: Self.configuration(clock))
        #expect(forged.tailStart.map { $0.sequence == start.sequence && $0.head != start } == true)
        let error = #expect(throws: LogError.self) { try forged.append([1, 2, 3]) }
        #expect(error?.code == .writerFailed)
        #expect(error.map { "\($0)".contains("start") } == true, "\(String(describing: error))")
        try? forged.close()
        let reopened = try EventLog.open(at: crashed.path, configuration: Self.configuration(clock))
        #expect(!reopened.recovery.usedTailCheckpoint && reopened.tailStart == nil)
        try reopened.append([1, 2, 3])
        try reopened.close()
        #expect(try LogVerifier.verify(directory: crashed.path).isClean)

        let reopenedPath = try TailCheckpointTests.checkpointPath(crashed)
        let startEnd = try readBytes(reopenedPath).getLittleEndian(UInt64.self, at: 96)
        try #require(startEnd > UInt64(LogFormat.segmentHeaderSize), "the last writer started after the first record")
        try Self.rewrite(reopenedPath) { $0.setLittleEndian(startEnd - 1, at: 96) }
        let shifted = try EventLog.open(at: crashed.path, configuration: Self.configuration(clock))
        #expect(shifted.recovery.usedTailCheckpoint && shifted.tailStart == nil)
        try shifted.append([5])
        try shifted.close()
    }
}
