@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// ``LogReader/headForCheck(at:)``: a head inside the active segment, after the writer's tail
/// checkpoint, is hashed from the checkpoint instead of from the segment's first record
/// (FORMAT.md, "Tail checkpoint": readers); ``LogReader/head(at:)`` never uses it.
@Suite struct HeadForCheckTests {
    /// One active segment: 300 commits, closed (a checkpoint at their end), whose checkpoint is
    /// kept aside, then 100 more commits and a close. The kept checkpoint is put back: it lies
    /// before the last events. Returns it with the sequence it ends at and the last one.
    static func logWithAnEarlierCheckpoint(_ folder: TemporaryFolder) throws -> (checkpoint: TailCheckpoint, at: UInt64, last: UInt64) {
        let clock = TestClock()
        let configuration = Format2LogTests.format2(clock: clock, segmentSize: 8 << 20)
        var log = try EventLog.open(at: folder.path, configuration: configuration)
        _ = try Format2LogTests.fill(log, clock: clock, commits: 300)
        try log.close()
        let path = try TailCheckpointTests.checkpointPath(folder)
        let kept = try Data(contentsOf: URL(fileURLWithPath: path))
        log = try EventLog.open(at: folder.path, configuration: configuration)
        _ = try Format2LogTests.fill(log, clock: clock, commits: 100, from: 300)
        try log.close()
        try kept.write(to: URL(fileURLWithPath: path))
        let header = try LogDirectory.readSegmentHeader(try segmentPath(folder), fileSystem: PosixFileSystem())
        let checkpoint = try #require(TailCheckpoint.decode([UInt8](kept), for: header))
        return (checkpoint, checkpoint.nextSequence - 1, log.lastSequence)
    }

    static func segmentPath(_ folder: TemporaryFolder) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".seg") }
        #expect(names.count == 1, "one segment: \(names)")
        return folder.sub(try #require(names.first))
    }

    static func replace(_ checkpoint: TailCheckpoint, in folder: TemporaryFolder) throws {
        try Data(checkpoint.encoded()).write(to: URL(fileURLWithPath: try TailCheckpointTests.checkpointPath(folder)))
    }

    @Test func headsAfterTheCheckpointAreTheRehashedOnes() throws {
        let folder = TemporaryFolder.made()
        let (_, at, last) = try Self.logWithAnEarlierCheckpoint(folder)
        #expect(at > 1 && at < last)
        let reader = try LogReader(directory: folder.path)
        for sequence in [1, at - 1, at, at + 1, (at + last) / 2, last] {
            #expect(try reader.headForCheck(at: sequence) == reader.head(at: sequence), "at \(sequence)")
        }
        #expect(try reader.headForCheck(at: last + 1) == nil)
    }

    @Test func theCheckpointsHeadIsTakenForTheCheckAndNeverForTheHead() throws {
        let folder = TemporaryFolder.made()
        var (checkpoint, at, last) = try Self.logWithAnEarlierCheckpoint(folder)
        let truth = try LogReader(directory: folder.path).head(at: last)
        // A checkpoint whose head is wrong, its checksum right: only a lookup that uses it can
        // come out wrong.
        checkpoint.chain = ChainHash(bytes: [UInt8](repeating: 0xAB, count: 32))
        try Self.replace(checkpoint, in: folder)
        let reader = try LogReader(directory: folder.path)
        #expect(try reader.headForCheck(at: last) != truth, "the check's lookup resumed at the checkpoint")
        #expect(try reader.headForCheck(at: at)?.hash == checkpoint.chain)
        #expect(try reader.head(at: last) == truth, "a head to show, sign or prove is rehashed from the segment's start")
        #expect(try reader.headForCheck(at: at - 1) == reader.head(at: at - 1), "before the checkpoint, it is not used")
    }

    @Test func aCheckpointThatEndsInsideARecordIsNotUsed() throws {
        let folder = TemporaryFolder.made()
        var (checkpoint, _, last) = try Self.logWithAnEarlierCheckpoint(folder)
        checkpoint.dataEnd += 1
        checkpoint.chain = ChainHash(bytes: [UInt8](repeating: 0xAB, count: 32))
        try Self.replace(checkpoint, in: folder)
        let reader = try LogReader(directory: folder.path)
        #expect(try reader.headForCheck(at: last) == reader.head(at: last))
    }
}
