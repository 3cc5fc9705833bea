@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// Tail checkpoints (FORMAT.md, "Tail checkpoint"): a clean close leaves the chain's head beside
/// the active segment, the next open starts from it instead of rehashing the segment when the
/// records still end where it says, checks it in the background, and refuses appends when it
/// was wrong; any other checkpoint is not used.
@Suite struct TailCheckpointTests {
    static func configuration(_ clock: ManualClock) -> LogConfiguration {
        Format2LogTests.format2(clock: clock, segmentSize: 64 << 10)
    }

    /// A log with a sealed segment or two and an active one holding events, closed cleanly.
    static func closedLog(_ folder: TemporaryDirectory, clock: ManualClock) throws -> [(time: Int64, payload: [UInt8])] {
        let log = try EventLog.open(at: folder.path, configuration: configuration(clock))
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 700)
        try log.close()
        return appended
    }

    static func checkpointPath(_ folder: TemporaryDirectory) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".head") }
        #expect(names.count == 1)
        return folder.sub(try #require(names.first))
    }

    /// What a reader computes, rehashing from the files: the head after the last event.
    static func rehashedHead(_ folder: TemporaryDirectory) throws -> LogHead {
        let reader = try LogReader(directory: folder.path)
        return try #require(try reader.head(at: try reader.lastSequence()))
    }

    @Test func aCleanCloseLeavesTheHeadAndTheNextOpenStartsFromIt() throws {
        let folder = TemporaryDirectory()
        let clock = ManualClock()
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

    /// A checkpoint that no longer describes the segment (events appended after it, a torn
    /// write after it, a flipped byte in it, another segment's) is not used, and the head is
    /// rehashed as before.
    @Test func aCheckpointThatDoesNotMatchTheSegmentIsNotUsed() throws {
        let folder = TemporaryDirectory()
        let clock = ManualClock()
        _ = try Self.closedLog(folder, clock: clock)
        let path = try Self.checkpointPath(folder)
        let good = try readBytes(path)
        let segment = folder.sub(Path.name(of: path).replacingOccurrences(of: ".head", with: ".seg"))

        // Events appended after it: the data no longer ends where it says.
        let log = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        try Format2LogTests.fill(log, clock: clock, commits: 5, from: 700)
        try log.close()
        let stale = good
        var flipped = good
        flipped[70] ^= 0x01
        var otherSegment = good
        otherSegment[16] ^= 0x01
        otherSegment.setLittleEndian(CRC32C.checksum(otherSegment[0..<96]), at: 96)
        for (what, bytes) in [("stale", stale), ("a flipped byte", flipped), ("another segment's", otherSegment)] {
            try writeBytes(bytes, to: path)
            let expected = try Self.rehashedHead(folder)
            let reopened = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
            #expect(!reopened.recovery.usedTailCheckpoint, "\(what)")
            #expect(reopened.head == expected, "\(what)")
            try reopened.close()
        }

        // A torn write after the end it names: the open cuts it, without the checkpoint.
        try writeBytes(try readBytes(try Self.checkpointPath(folder)), to: path)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x41, 0x42, 0x43]))
        try handle.close()
        let torn = try EventLog.open(at: folder.path, configuration: Self.configuration(clock))
        #expect(!torn.recovery.usedTailCheckpoint)
        #expect(torn.recovery.cutTail != nil)
        try torn.close()
        #expect(try LogVerifier.verify(directory: folder.path).isClean)
    }

    /// A checkpoint whose head is wrong but which is otherwise right (a faulty or forged one)
    /// is started from, found wrong by the background check before anything is appended, and
    /// the log refuses appends until reopened; the reopen rehashes and all is well.
    @Test func aWrongCheckpointIsCaughtBeforeTheFirstAppend() throws {
        let folder = TemporaryDirectory()
        let clock = ManualClock()
        let appended = try Self.closedLog(folder, clock: clock)
        let path = try Self.checkpointPath(folder)
        let expected = try Self.rehashedHead(folder)
        var forged = try readBytes(path)
        forged[64] ^= 0x01  // the chain
        forged.setLittleEndian(CRC32C.checksum(forged[0..<96]), at: 96)
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
