@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// `verify` and `repair` on a format-2 log: the whole chain rehashed across blocks and the hot
/// tail, a changed event found even when every checksum was made to hold, and repair cutting
/// back to the last good record.
@Suite struct Format2VerifyTests {
    /// A log with block files and a hot tail of several segments.
    static func makeLog(_ folder: TemporaryFolder) throws -> (head: LogHead, appended: [(time: Int64, payload: [UInt8])]) {
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock, segmentSize: 4096)
        configuration.blockSize = 2048
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        var appended = try Format2LogTests.fill(log, clock: clock, commits: 200)
        try log.compact()
        appended += try Format2LogTests.fill(log, clock: clock, commits: 100, from: 200)
        let head = log.head
        try log.close()
        return (head, appended)
    }

    @Test func aHealthyLogVerifiesToTheWritersHead() throws {
        let folder = TemporaryFolder.made()
        let (head, appended) = try Self.makeLog(folder)
        let report = try LogVerifier.verify(directory: folder.path)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.format == .v2)
        #expect(report.events == UInt64(appended.count))
        #expect(report.lastSequence == head.sequence)
        #expect(report.headHash == head.hash)
        #expect(report.blockFiles == 1 && report.blocks > 3)
        #expect(report.segments > 1 && report.records > 0)
        #expect(report.checkpoints == report.blocks + report.segments)
        #expect(report.blockBytes > 0 && report.tailBytes > 0)
        #expect(try LogRepair.plan(directory: folder.path).isNeeded == false)
    }

    /// An event changed inside a block whose checksums were all recomputed: only the chain
    /// can tell, and verify does.
    @Test func aChangedEventWithItsChecksumsRecomputedIsFoundByTheChain() throws {
        let folder = TemporaryFolder.made()
        _ = try Self.makeLog(folder)
        let path = folder.sub("00000000000000000001.blk")
        var file = try readBytes(path)
        // The last block of the file: rebuild it with one payload changed, keep its stated chain.
        var offset = LogFormat.blockFileHeaderSize
        var last = offset
        while offset < file.count {
            last = offset
            offset += try file.withUnsafeBytes { try BlockHeader.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])).get() }.totalSize
        }
        let header = try file.withUnsafeBytes { try BlockHeader.decode(UnsafeRawBufferPointer(rebasing: $0[last...])).get() }
        let block = try file.withUnsafeBytes {
            try SealedBlock.decode(header, stored: UnsafeRawBufferPointer(rebasing: $0[(last + LogFormat.blockHeaderSize)...]), decompressor: ZstdDecompressor(), payloadCodec: nil).get()
        }
        var builder = BlockBuilder(firstSequence: header.firstSequence, timeBefore: header.timeBefore, chainBefore: header.chainBefore)
        for (index, event) in block.events.enumerated() {
            var payload = Array(event.payload)
            if index == 1 { payload[0] ^= 0x01 }
            builder.add(payload[...], at: event.timestamp.microsecondsSinceEpoch)
        }
        var rebuilt: [UInt8] = []
        builder.encode(layout: header.layout, compressor: nil, into: &rebuilt)
        rebuilt.replaceSubrange(LogFormat.blockChainAfterOffset..<LogFormat.blockChainAfterOffset + 32, with: header.chainAfter.bytes)
        rebuilt.setLittleEndian(CRC32C.checksum(rebuilt[0..<LogFormat.blockHeaderCRCOffset]), at: LogFormat.blockHeaderCRCOffset)
        file.replaceSubrange(last..., with: rebuilt)
        try writeBytes(file, to: path)

        // Readers check checksums and links only: they read the changed event.
        #expect(try readAll(folder.path).count > 0)
        let report = try LogVerifier.verify(directory: folder.path)
        let problem = try #require(report.problems.first)
        #expect(problem.kind == .corruption)
        #expect(problem.file == path)
        #expect(problem.offset == Int64(last))
        #expect(problem.sequence == header.firstSequence)
        #expect(problem.message.contains("rehash"))
    }

    @Test func repairCutsBackToTheLastGoodRecordKeepingACopy() throws {
        let folder = TemporaryFolder.made()
        let (_, appended) = try Self.makeLog(folder)
        let segments = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".seg") }.sorted()
        #expect(segments.count > 2)
        let damaged = folder.sub(segments[0])
        try flipByte(at: LogFormat.segmentHeaderSize + 40, in: damaged)
        let plan = try LogRepair.plan(directory: folder.path)
        #expect(plan.isNeeded)
        #expect(plan.segment == damaged)
        #expect(plan.laterSegments.count == segments.count - 1)
        expectLogError(.corrupt) { try readAll(folder.path) }
        try LogRepair.execute(plan)
        let report = try LogVerifier.verify(directory: folder.path)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.lastSequence == plan.firstDroppedSequence - 1)
        #expect(try readAll(folder.path).count == Int(plan.firstDroppedSequence - 1))
        #expect(FileManager.default.fileExists(atPath: folder.sub("quarantine")))
        // The repaired log takes appends again, continuing its chain.
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2(clock: TestClock(appended.last!.time + 1)))
        try log.append([1, 2, 3])
        try log.close()
        #expect(try LogVerifier.verify(directory: folder.path).isClean)
    }
}
