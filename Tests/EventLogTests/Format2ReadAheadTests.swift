@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// Reading ahead (Format2ReadAhead.swift): a block file's next block is read, checked and
/// decompressed on another thread while the cursor hands out the block before it. Readers must
/// see exactly what they saw without it: every event once, in order, ranges cut where asked,
/// and damage reported with its file, offset and sequence at the block where it lies.
@Suite struct Format2ReadAheadTests {
    /// A compacted log of many small blocks, and what was appended to it.
    static func manyBlocks(_ path: String) throws -> [(time: Int64, payload: [UInt8])] {
        let clock = ManualClock()
        var configuration = Format2LogTests.format2(clock: clock)
        configuration.blockSize = 4096
        let log = try EventLog.open(at: path, configuration: configuration)
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 600)
        try log.compact()
        try log.close()
        return appended
    }

    @Test func everyRangeReadsBackExactlyAcrossBlocks() throws {
        let folder = TemporaryDirectory()
        let appended = try Self.manyBlocks(folder.path)
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))
        let reader = try LogReader(directory: folder.path)
        let count = UInt64(appended.count)
        for (first, last) in [(1, count), (2, 90), (150, 151), (77, count - 3), (count, count)] {
            let cursor = try reader.events(from: first, through: last)
            var sequences: [UInt64] = []
            while let event = try cursor.next() {
                #expect(Array(event.payload) == appended[Int(event.sequence) - 1].payload)
                sequences.append(event.sequence)
            }
            #expect(sequences == Array(first...last), "events \(first) through \(last)")
        }
        // A cursor left half-read while a block is in flight goes away cleanly, and the log
        // can be opened and compacted again at once.
        for _ in 0..<20 {
            let cursor = try reader.events(from: 1)
            for _ in 0..<60 { _ = try cursor.next() }
        }
        let reopened = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2())
        try reopened.close()
    }

    /// A flipped byte in any block's payload is named at that block, whichever thread read it.
    @Test func damageInAReadAheadBlockIsNamedWhereItLies() throws {
        let folder = TemporaryDirectory()
        let appended = try Self.manyBlocks(folder.path)
        let blockFile = try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".blk") }!
        let path = folder.path + "/" + blockFile
        let bytes = try readBytes(path)
        // Walk the blocks by their headers to find where each starts.
        var offsets: [(offset: Int, first: UInt64, total: Int)] = []
        bytes.withUnsafeBytes { all in
            var position = Format2.blockFileHeaderSize
            while position + Format2.blockHeaderSize <= all.count,
                case .success(let header) = BlockHeader.decode(UnsafeRawBufferPointer(rebasing: all[position..<position + Format2.blockHeaderSize]))
            {
                offsets.append((position, header.firstSequence, header.totalSize))
                position += header.totalSize
            }
        }
        #expect(offsets.count > 8)
        #expect(appended.count > 1_000)
        for target in [1, 4, offsets.count - 1] {
            let copy = TemporaryDirectory()
            try copyDirectory(folder.path, to: copy.path)
            let block = offsets[target]
            try flipByte(at: block.offset + Format2.blockHeaderSize + 5, in: copy.path + "/" + blockFile)
            let cursor = try LogReader(directory: copy.path).events()
            var last: UInt64 = 0
            do {
                while let event = try cursor.next() { last = event.sequence }
                Issue.record("damage in block \(target) went unseen")
            } catch let error as LogError {
                #expect(error.code == .corrupt)
                #expect(error.file == copy.path + "/" + blockFile)
                #expect(error.offset == Int64(block.offset), "block \(target)")
                #expect(error.sequence == block.first)
                #expect(last == block.first - 1, "every event before the damaged block was read")
            }
        }
    }
}
