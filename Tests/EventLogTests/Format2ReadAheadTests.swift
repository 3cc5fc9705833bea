@testable import EventLog
import FileIO
import Foundation
import SeededRandom
import StorageTestSupport
import Testing

/// Reading ahead (BlockReadAhead.swift): a block file's next block is read, checked and
/// decompressed on another thread while the cursor hands out the block before it. Readers must
/// see exactly what they saw without it: every event once, in order, ranges cut where asked,
/// and damage reported with its file, offset and sequence at the block where it lies.
@Suite struct Format2ReadAheadTests {
    /// A compacted log of many small blocks, and what was appended to it.
    static func manyBlocks(_ path: String) throws -> [(time: Int64, payload: [UInt8])] {
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock)
        configuration.blockSize = 4096
        let log = try EventLog.open(at: path, configuration: configuration)
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 600)
        try log.compact()
        try log.close()
        return appended
    }

    /// `manyBlocks` in a new folder, with its one block file's path and blocks.
    static func blockFileLog() throws -> (
        folder: TemporaryFolder, appended: [(time: Int64, payload: [UInt8])], path: String,
        blocks: [(offset: Int, first: UInt64, total: Int, lastTime: Int64)]
    ) {
        let folder = TemporaryFolder.made()
        let appended = try manyBlocks(folder.path)
        let blockFile = try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".blk") }!
        let path = folder.path + "/" + blockFile
        let blocks = try Self.blocks(in: path)
        try #require(blocks.count > 8)
        return (folder, appended, path, blocks)
    }

    /// The sequences `cursor` hands out, each event's payload checked against what was appended.
    static func sequences(_ cursor: LogCursor, checkedAgainst appended: [(time: Int64, payload: [UInt8])]) throws -> [UInt64] {
        var sequences: [UInt64] = []
        while let event = try cursor.next() {
            #expect(Array(event.payload) == appended[Int(event.sequence) - 1].payload)
            sequences.append(event.sequence)
        }
        return sequences
    }

    @Test func everyRangeReadsBackExactlyAcrossBlocks() throws {
        let folder = TemporaryFolder.made()
        let appended = try Self.manyBlocks(folder.path)
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))
        let reader = try LogReader(directory: folder.path)
        let count = UInt64(appended.count)
        for (first, last) in [(1, count), (2, 90), (150, 151), (77, count - 3), (count, count)] {
            let cursor = try reader.events(from: first, through: last)
            let sequences = try Self.sequences(cursor, checkedAgainst: appended)
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
        let (folder, appended, path, offsets) = try Self.blockFileLog()
        #expect(appended.count > 1_000)
        for target in [1, 4, offsets.count - 1] {
            let copy = TemporaryFolder.made()
            try copyDirectory(folder.path, to: copy.path)
            let block = offsets[target]
            try flipByte(at: block.offset + LogFormat.blockHeaderSize + 5, in: copy.path + "/" + Path.name(of: path))
            let cursor = try LogReader(directory: copy.path).events()
            var last: UInt64 = 0
            do {
                while let event = try cursor.next() { last = event.sequence }
                Issue.record("damage in block \(target) went unseen")
            } catch let error as LogError {
                #expect(error.code == .corrupt)
                #expect(error.file == copy.path + "/" + Path.name(of: path))
                #expect(error.offset == Int64(block.offset), "block \(target)")
                #expect(error.sequence == block.first)
                #expect(last == block.first - 1, "every event before the damaged block was read")
            }
        }
    }

    /// Where each block of a block file starts, walked by its headers.
    static func blocks(in path: String) throws -> [(offset: Int, first: UInt64, total: Int, lastTime: Int64)] {
        let bytes = try readBytes(path)
        var offsets: [(offset: Int, first: UInt64, total: Int, lastTime: Int64)] = []
        bytes.withUnsafeBytes { all in
            var position = LogFormat.blockFileHeaderSize
            while position + LogFormat.blockHeaderSize <= all.count,
                case .success(let header) = BlockHeader.decode(UnsafeRawBufferPointer(rebasing: all[position..<position + LogFormat.blockHeaderSize]))
            {
                offsets.append((position, header.firstSequence, header.totalSize, header.lastTime))
                position += header.totalSize
            }
        }
        return offsets
    }

    /// A cursor that starts in the middle of a block file steps over the blocks before its
    /// start by their headers: it reads neither their payloads (a flipped payload byte there
    /// goes unseen, and the bytes read are a fraction of the file) nor trusts a header that
    /// breaks the chain of links (named at that block). Starting by time does the same.
    @Test func aSeekReadsOnlyTheHeadersOfTheBlocksBeforeIt() throws {
        let (folder, appended, path, blocks) = try Self.blockFileLog()
        let target = blocks[blocks.count - 2]
        try flipByte(at: blocks[1].offset + LogFormat.blockHeaderSize + 5, in: path)

        let fileSystem = InstrumentedFileSystem()
        let cursor = try LogReader(directory: folder.path, fileSystem: fileSystem).events(from: target.first)
        let sequences = try Self.sequences(cursor, checkedAgainst: appended)
        #expect(sequences == Array(target.first...UInt64(appended.count)))
        let fileSize = try readBytes(path).count
        #expect(fileSystem.bytesRead < UInt64(fileSize / 2), "read \(fileSystem.bytesRead) of the file's \(fileSize) bytes")

        // By time: the first event after the block before the target's last time.
        let since = LogTimestamp(microsecondsSinceEpoch: blocks[blocks.count - 3].lastTime + 1)
        let byTime = try LogReader(directory: folder.path).events(since: since)
        let first = try #require(try byTime.next())
        let expected = try #require(appended.indices.first { appended[$0].time >= since.microsecondsSinceEpoch })
        #expect(first.sequence == UInt64(expected + 1))

        // From the start, the damaged payload is found.
        #expect(throws: LogError.self) { try readAll(folder.path) }

        // A header stepped over that does not link to the block before it is named there.
        let linkBroken = TemporaryFolder.made()
        try copyDirectory(folder.path, to: linkBroken.path)
        let brokenPath = linkBroken.path + "/" + Path.name(of: path)
        var bytes = try readBytes(brokenPath)
        let third = blocks[3].offset
        // Swap in the second block's header (its own CRC intact): it starts at the wrong
        // sequence and from the wrong chain head.
        bytes.replaceSubrange(third..<third + LogFormat.blockHeaderSize, with: bytes[blocks[2].offset..<blocks[2].offset + LogFormat.blockHeaderSize])
        try Data(bytes).write(to: URL(fileURLWithPath: brokenPath))
        do {
            let broken = try LogReader(directory: linkBroken.path).events(from: target.first)
            while try broken.next() != nil {}
            Issue.record("a broken header link before the start went unseen")
        } catch let error as LogError {
            #expect(error.code == .corrupt)
            #expect(error.offset == Int64(third))
        }
    }

    /// A reader keeps the block headers its seeks read: seeking again into the same file reads
    /// none before the block it wants (forwards, backwards, by time, for a head), with the same
    /// events; a file changed since is walked, and checked, anew.
    @Test func aReaderSeeksAgainWithoutRereadingTheHeadersBeforeItsBlock() throws {
        let (folder, appended, path, blocks) = try Self.blockFileLog()
        let fileSystem = InstrumentedFileSystem()
        let reader = try LogReader(directory: folder.path, fileSystem: fileSystem)
        func firstEvents(from sequence: UInt64) throws -> (read: Int, sequences: [UInt64]) {
            let before = fileSystem.reads
            let cursor = try reader.events(from: sequence, through: sequence + 2)
            let sequences = try Self.sequences(cursor, checkedAgainst: appended)
            return (fileSystem.reads - before, sequences)
        }
        let late = blocks[blocks.count - 2].first + 1
        let walked = try firstEvents(from: late)
        let again = try firstEvents(from: late)
        #expect(again.sequences == walked.sequences && walked.sequences == [late, late + 1, late + 2])
        #expect(walked.read >= blocks.count - 2, "the first seek reads a header a block before its own")
        #expect(again.read <= 3, "read \(again.read) times again, \(walked.read) the first time")
        let early = try firstEvents(from: blocks[3].first)
        #expect(early.sequences == [blocks[3].first, blocks[3].first + 1, blocks[3].first + 2])
        #expect(early.read <= 3, "an earlier block is jumped to as well (\(early.read) reads)")
        let last = UInt64(appended.count)
        #expect(try firstEvents(from: last).sequences == [last], "past the blocks known, the walk goes on")

        let since = LogTimestamp(microsecondsSinceEpoch: blocks[blocks.count - 3].lastTime + 1)
        let expected = try #require(appended.indices.first { appended[$0].time >= since.microsecondsSinceEpoch })
        #expect(try reader.events(since: since).next()?.sequence == UInt64(expected + 1))
        let independent = try LogReader(directory: folder.path)
        for sequence in [blocks[2].first + 3, late, last] {
            #expect(try reader.head(at: sequence) == independent.head(at: sequence), "head at \(sequence)")
        }

        // Changed since (a header two blocks in): the same reader walks the file again and
        // finds the damage instead of trusting what it had read.
        try flipByte(at: blocks[2].offset + 20, in: path)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: path)
        #expect(throws: LogError.self) { _ = try firstEvents(from: late) }
    }


    /// A head's lookup decodes the block its sequence lies in; the replay that follows it (a
    /// state at a point: the snapshot's head, then the events after it) takes that block from
    /// the same reader instead of reading and decoding it again. Once: a second cursor reads it
    /// itself. And never from a file changed since: damage put there is found.
    @Test func theBlockAHeadDecodedIsHandedToTheReadThatFollows() throws {
        let (folder, appended, path, blocks) = try Self.blockFileLog()
        let block = blocks[blocks.count / 2]
        let sequence = block.first + 2  // inside the block: its head is not in the header
        let fileSystem = InstrumentedFileSystem()
        let reader = try LogReader(directory: folder.path, fileSystem: fileSystem)
        func readsOfEvents(after sequence: UInt64) throws -> Int {
            let before = fileSystem.reads
            let sequences = try Self.sequences(try reader.events(from: sequence + 1, through: sequence + 3), checkedAgainst: appended)
            #expect(sequences == [sequence + 1, sequence + 2, sequence + 3])
            return fileSystem.reads - before
        }
        #expect(try reader.head(at: sequence) == LogReader(directory: folder.path).head(at: sequence))
        let handed = try readsOfEvents(after: sequence)
        let again = try readsOfEvents(after: sequence)
        #expect(handed < again, "with the block handed over: \(handed) reads; reading it again: \(again)")

        // The file changed after the lookup (a payload byte of that block, and its time): the
        // block handed over is not the file's any more, and the read finds the damage.
        _ = try reader.head(at: sequence)
        try flipByte(at: block.offset + LogFormat.blockHeaderSize + 5, in: path)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: path)
        #expect(throws: LogError.self) { _ = try readsOfEvents(after: sequence) }
    }

    /// One reader, many seeks in random order (by sequence and by time, into two block files and
    /// the hot tail, and heads between them): every answer is the one a fresh reader gives, so
    /// the headers it keeps never send a seek to the wrong block.
    @Test func randomSeeksByOneReaderAgreeWithFreshReaders() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock)
        configuration.blockSize = 4096
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        var appended = try Format2LogTests.fill(log, clock: clock, commits: 300)
        try log.compact()
        appended += try Format2LogTests.fill(log, clock: clock, commits: 300, from: 300)
        try log.compact()
        appended += try Format2LogTests.fill(log, clock: clock, commits: 40, from: 600)
        try log.close()
        try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".blk") }.count == 2)

        let reader = try LogReader(directory: folder.path)
        let count = UInt64(appended.count)
        var random = SplitMix(seed: 19)
        for round in 0..<300 {
            let first = UInt64.random(in: 1...count, using: &random)
            switch round % 3 {
            case 0:
                let last = min(count, first + UInt64.random(in: 0...5, using: &random))
                let cursor = try reader.events(from: first, through: last)
                let sequences = try Self.sequences(cursor, checkedAgainst: appended)
                #expect(sequences == Array(first...last), "events \(first) through \(last)")
            case 1:
                let since = LogTimestamp(microsecondsSinceEpoch: appended[Int(first) - 1].time)
                let found = try reader.events(since: since).next()
                let expected = appended.firstIndex { $0.time >= since.microsecondsSinceEpoch }.map { UInt64($0 + 1) }
                #expect(found?.sequence == expected, "since \(since)")
            default:
                #expect(try reader.head(at: first) == LogReader(directory: folder.path).head(at: first), "head at \(first)")
            }
        }
    }

}
