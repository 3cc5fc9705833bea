@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// Tail checkpoints (FORMAT.md, "Tail checkpoint"): a clean close leaves the chain's head beside
/// the active segment, the next open starts from it instead of rehashing the segment when the
/// records still end where it says, checks it in the background, and refuses appends when it
/// was wrong; any other checkpoint is not used.
@Suite(.heavy) struct TailCheckpointTests {
    static func configuration(_ clock: TestClock) -> LogConfiguration {
        Format2LogTests.format2(clock: clock, segmentSize: 64 << 10)
    }

    /// A log with a sealed segment or two and an active one holding events, closed cleanly.
    static func closedLog(_ folder: TemporaryFolder, clock: TestClock) throws -> [(time: Int64, payload: [UInt8])] {
        let log = try EventLog.open(at: folder.path, configuration: configuration(clock))
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 700)
        try log.close()
        return appended
    }

    static func checkpointPath(_ folder: TemporaryFolder) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".head") }
        #expect(names.count == 1)
        return folder.sub(try #require(names.first))
    }

    /// What a reader computes, rehashing from the files: the head after the last event.
    static func rehashedHead(_ folder: TemporaryFolder) throws -> LogHead {
        let reader = try LogReader(directory: folder.path)
        return try #require(try reader.head(at: try reader.lastSequence()))
    }

    @Test func aCleanCloseLeavesTheHeadAndTheNextOpenStartsFromIt() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var appended = try Self.closedLog(folder, clock: clock)
        let path = try Self.checkpointPath(folder)
        let expected = try Self.rehashedHead(folder)

        let log = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(log.recovery.usedTailCheckpoint)
        #expect(!FileManager.default.fileExists(atPath: path), "a checkpoint is for one open")
        #expect(log.head == expected && log.lastSequence == UInt64(appended.count))
        #expect(log.lastTimestamp?.microsecondsSinceEpoch == appended.last?.time)
        appended += try Format2LogTests.fill(log, clock: clock, commits: 40, from: 700)
        try log.close()

        let events = try readAll(folder.path)
        #expect(events.map { Array($0.payload) } == appended.map(\.payload))
        let report = try LogVerifier.verify(directory: folder.path)
        #expect(report.isClean, "\(report.problems)")
        #expect(try Self.rehashedHead(folder) == log.head)
    }

    /// A checkpoint from earlier in the segment (events appended after it, a torn write after
    /// them) is used: the records after its end of data are rehashed, and a torn tail cut, as
    /// without it.
    @Test func anEarlierCheckpointIsUsedAndTheRecordsAfterItAreRehashed() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var appended = try Self.closedLog(folder, clock: clock)
        let path = try Self.checkpointPath(folder)
        let earlier = try readBytes(path)
        let log = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        appended += try Format2LogTests.fill(log, clock: clock, commits: 5, from: 700)
        try log.close()
        try writeBytes(earlier, to: path)
        let expected = try Self.rehashedHead(folder)

        let reopened = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(reopened.recovery.usedTailCheckpoint)
        #expect(reopened.head == expected && reopened.lastSequence == UInt64(appended.count))
        #expect(reopened.lastTimestamp?.microsecondsSinceEpoch == appended.last?.time)
        try reopened.close()

        // A torn write after the records: cut, the checkpoint still used.
        try writeBytes(earlier, to: path)
        let segment = folder.sub(Path.name(of: path).replacingOccurrences(of: ".head", with: ".seg"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x41, 0x42, 0x43]))
        try handle.close()
        let torn = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(torn.recovery.usedTailCheckpoint)
        #expect(torn.recovery.cutTail != nil)
        #expect(torn.head == expected && torn.lastSequence == UInt64(appended.count))
        try torn.close()
        #expect(try LogVerifier.verify(directory: folder.path).isClean)
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))
    }

    /// A checkpoint that does not describe the segment (a flipped byte in it, another
    /// segment's, an end of data inside a record or past the data, a damaged record before its
    /// end) is not used, and the head is rehashed as before.
    @Test func aCheckpointThatDoesNotMatchTheSegmentIsNotUsed() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        _ = try Self.closedLog(folder, clock: clock)
        let path = try Self.checkpointPath(folder)
        let good = try readBytes(path)
        let dataEnd = Int64(good.getLittleEndian(UInt64.self, at: 40))
        func withCRC(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            bytes.setLittleEndian(CRC32C.checksum(bytes[0..<TailCheckpoint.crcOffset]), at: TailCheckpoint.crcOffset)
            return bytes
        }
        func ending(at end: Int64) -> [UInt8] {
            var bytes = good
            bytes.setLittleEndian(UInt64(end), at: 40)
            return withCRC(bytes)
        }
        var flipped = good
        flipped[70] ^= 0x01
        var otherSegment = good
        otherSegment[16] ^= 0x01
        let cases = [
            ("a flipped byte", flipped), ("another segment's", withCRC(otherSegment)),
            ("an end inside the last record", ending(at: dataEnd - 1)),
            ("an end inside the first record", ending(at: Int64(LogFormat.segmentHeaderSize) + 1)),
            ("an end past the data", ending(at: dataEnd + 64)),
        ]
        let expected = try Self.rehashedHead(folder)
        for (what, bytes) in cases {
            try writeBytes(bytes, to: path)
            let reopened = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
            #expect(!reopened.recovery.usedTailCheckpoint, "\(what)")
            #expect(reopened.head == expected, "\(what)")
            try reopened.close()
        }

        // A record before its end damaged: not used, and the open names the damage.
        let current = try Self.checkpointPath(folder)
        let segment = folder.sub(Path.name(of: current).replacingOccurrences(of: ".head", with: ".seg"))
        try flipByte(at: LogFormat.segmentHeaderSize + 40, in: segment)
        #expect(throws: LogError.self) { try EventLog.open(at: folder.path, configuration: Self.configuration(clock)) }
    }

    /// A running writer leaves a checkpoint after a sync every `tailCheckpointInterval` bytes of
    /// records, only beside the active segment; an open after a crash (the files as they are,
    /// copied while the log is open) starts from it and rehashes only the records after it.
    @Test func aRunningWriterLeavesCheckpointsThatAnOpenAfterACrashUses() throws {
        let folder = TemporaryFolder.made()
        let crashed = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = Self.configuration(clock)
        configuration.tailCheckpointInterval = 8 << 10
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        var appended: [(time: Int64, payload: [UInt8])] = []
        var used = 0
        for round in 0..<12 {
            appended += try Format2LogTests.fill(log, clock: clock, commits: 60, from: round * 60)
            let heads = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".head") }
            #expect(heads.count <= 1, "only the active segment's checkpoint is kept: \(heads)")
            try copyDirectory(folder.path, to: crashed.path)
            try? FileManager.default.removeItem(atPath: crashed.sub(LogFiles.lockFileName))
            let expected = try Self.rehashedHead(crashed)
            let reopened = try EventLog.open(at: crashed.path, configuration: configuration)
            if reopened.recovery.usedTailCheckpoint { used += 1 }
            #expect(reopened.head == expected && reopened.lastSequence == UInt64(appended.count), "round \(round)")
            #expect(reopened.head == log.head, "round \(round)")
            try reopened.append([7, 7, 7])
            try reopened.close()
            #expect(try LogVerifier.verify(directory: crashed.path).isClean, "round \(round)")
        }
        try log.close()
        #expect(used >= 8, "most crashes find a checkpoint: \(used) of 12")

        // Without an interval, a running writer leaves none.
        let quiet = TemporaryFolder.made()
        configuration.tailCheckpointInterval = nil
        let other = try EventLog.open(at: quiet.path, configuration: configuration)
        try Format2LogTests.fill(other, clock: clock, commits: 600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: quiet.path).allSatisfy { !$0.hasSuffix(".head") })
        try other.close()
    }

    /// A checkpoint whose head is wrong but which is otherwise right (a faulty or forged one)
    /// is started from, found wrong by the background check before anything is appended, and
    /// the log refuses appends until reopened; the reopen rehashes and all is well.
    @Test func aWrongCheckpointIsCaughtBeforeTheFirstAppend() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let appended = try Self.closedLog(folder, clock: clock)
        let path = try Self.checkpointPath(folder)
        let expected = try Self.rehashedHead(folder)
        var forged = try readBytes(path)
        forged[64] ^= 0x01  // the chain
        forged.setLittleEndian(CRC32C.checksum(forged[0..<TailCheckpoint.crcOffset]), at: TailCheckpoint.crcOffset)
        try writeBytes(forged, to: path)

        let log = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(log.recovery.usedTailCheckpoint)
        let error = #expect(throws: LogError.self) { try log.append([1, 2, 3]) }
        #expect(error?.code == .writerFailed)
        #expect(error.map { "\($0)".contains("tail checkpoint") } == true, "\(String(describing: error))")
        try? log.close()
        #expect(!FileManager.default.fileExists(atPath: path))

        let reopened = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(!reopened.recovery.usedTailCheckpoint)
        #expect(reopened.head == expected && reopened.lastSequence == UInt64(appended.count))
        try reopened.append([1, 2, 3])
        try reopened.close()
        #expect(try LogVerifier.verify(directory: folder.path).isClean)
    }
}
