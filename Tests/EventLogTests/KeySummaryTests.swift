@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// Key summaries (FORMAT.md, "Key summaries"): written with every block file when a key function
/// is configured, used to skip the blocks that hold no wanted key, never trusted when damaged,
/// foreign or stale, rewritten by an erase, and built when missing.
@Suite struct KeySummaryTests {
    /// A key for four events in five, from 37 values, so that a block holds some keys and not others.
    static let keys = BlockKeys(name: "test-sum") { payload in
        let sum = payload.reduce(UInt64(0)) { $0 &+ UInt64($1) }
        return sum % 5 == 0 ? nil : sum % 37
    }

    static func key(_ payload: [UInt8]) -> UInt64? { keys.key(payload[...]) }

    /// A log of about 900 events: blocks of 2 KiB compacted from 4 KiB segments, then a hot tail.
    static func makeLog(_ folder: TemporaryFolder, keys: BlockKeys? = Self.keys)
        throws -> (EventLog, [[UInt8]])
    {
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock, segmentSize: 4096)
        configuration.blockSize = 2048
        configuration.blockCompressionLevel = 1
        configuration.blockKeys = keys
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        var appended = try Format2LogTests.fill(log, clock: clock, commits: 400)
        try log.compact()
        appended += try Format2LogTests.fill(log, clock: clock, commits: 40, from: 400)
        return (log, appended.map(\.payload))
    }

    static func summaryPaths(_ folder: TemporaryFolder) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".keys") }.sorted().map(folder.sub)
    }

    /// Every event with a wanted key lies in the ranges given, each range read from the block
    /// files holds one, and a single key's ranges are a small part of the log; the hot tail is
    /// always given, and the ranges stay inside the asked ones.
    @Test func theRangesHoldEveryEventWithTheKeyAndSkipBlocksWithout() throws {
        let folder = TemporaryFolder.made()
        let (log, payloads) = try Self.makeLog(folder)
        #expect(try Self.summaryPaths(folder).count == 1)
        let reader = try LogReader(directory: folder.path)
        let last = UInt64(payloads.count)
        let hotTail = try #require(try LogDirectory.listed(folder.path).first { $0.kind == .segment }).firstSequence
        #expect(hotTail > 500)
        for (wanted, from, through) in [(5...5, 1, last), (0...0, 1, last), (3...9, 1, last), (36...36, 200, 700), (20...20, 1, 100), (0...UInt64.max, 1, last)]
            as [(ClosedRange<UInt64>, UInt64, UInt64)]
        {
            let ranges = try reader.ranges(mayHoldKeysIn: wanted, function: "test-sum", from: from, through: through)
            let matching = (from...through).filter { Self.key(payloads[Int($0 - 1)]).map(wanted.contains) == true }
            for sequence in matching {
                #expect(ranges.contains { $0.contains(sequence) }, "event \(sequence) with key in \(wanted) is left out")
            }
            for range in ranges {
                #expect(range.lowerBound >= from && range.upperBound <= through)
                #expect(range.upperBound >= hotTail || matching.contains { range.contains($0) }, "\(range) holds no event with a key in \(wanted)")
            }
            for (one, next) in zip(ranges, ranges.dropFirst()) { #expect(one.upperBound + 1 < next.lowerBound) }
            if through == last { #expect(ranges.last?.upperBound == last, "the hot tail is always read") }
            if wanted.lowerBound == wanted.upperBound, from == 1, through == last {
                let covered = ranges.reduce(0) { $0 + $1.count }
                #expect(covered < Int(last) * 2 / 3, "key \(wanted): \(covered) of \(last) events to read")
            }
        }
        // Another key function's question, or a format-1 log, gets the whole range.
        #expect(try reader.ranges(mayHoldKeysIn: 5...5, function: "other", from: 1, through: last) == [1...last])
        try log.close()
    }

    /// A summary that is damaged, cut short, written for another block file or another key
    /// function is not used (the whole file is read); building the missing summaries writes the
    /// same summary again, and removes one whose block file is gone.
    @Test func aSummaryThatDoesNotHoldIsNotUsedAndIsBuiltAgain() throws {
        let folder = TemporaryFolder.made()
        let (log, payloads) = try Self.makeLog(folder)
        let last = UInt64(payloads.count)
        let path = try #require(try Self.summaryPaths(folder).first)
        let good = try readBytes(path)
        let tight = try LogReader(directory: folder.path).ranges(mayHoldKeysIn: 5...5, function: "test-sum", from: 1, through: last)
        #expect(tight.count > 1)
        var otherFunction = good
        otherFunction[60] ^= 0x20  // "T": another name, with its header checksum made right
        otherFunction.setLittleEndian(CRC32C.checksum(otherFunction[0..<76]), at: 76)
        var otherFile = good
        otherFile[48] ^= 0x01  // another created_at, checksum made right
        otherFile.setLittleEndian(CRC32C.checksum(otherFile[0..<76]), at: 76)
        var unordered = good  // two keys of a block swapped, the file checksum made right
        let firstKeys = 80 + 12
        let count = Int(good.getLittleEndian(UInt32.self, at: 88))
        #expect(count >= 2)
        unordered.replaceSubrange(firstKeys..<firstKeys + 16, with: Array(good[firstKeys + 8..<firstKeys + 16] + good[firstKeys..<firstKeys + 8]))
        unordered.setLittleEndian(CRC32C.checksum(unordered[80..<(unordered.count - 4)]), at: unordered.count - 4)
        let damaged: [(String, [UInt8]?)] = [
            ("a flipped key", { var b = good; b[good.count / 2] ^= 0x04; return b }()), ("cut short", Array(good.dropLast(4))),
            ("another key function", otherFunction), ("another block file", otherFile), ("keys out of order", unordered), ("gone", nil),
        ]
        for (what, bytes) in damaged {
            if let bytes { try writeBytes(bytes, to: path) } else { try FileManager.default.removeItem(atPath: path) }
            let ranges = try LogReader(directory: folder.path).ranges(mayHoldKeysIn: 5...5, function: "test-sum", from: 1, through: last)
            #expect(ranges == [1...last], "\(what): the whole log is read")
            #expect(try log.buildKeySummaries() == 1, "\(what)")
            #expect(try readBytes(path) == good, "\(what): built again as compaction wrote it")
            #expect(try LogReader(directory: folder.path).ranges(mayHoldKeysIn: 5...5, function: "test-sum", from: 1, through: last) == tight)
        }
        #expect(try log.buildKeySummaries() == 0)
        let orphan = folder.sub("00000000000000999999.keys")
        try writeBytes(good, to: orphan)
        #expect(try log.buildKeySummaries() == 0)
        #expect(!FileManager.default.fileExists(atPath: orphan))
        try log.close()
    }

    /// An erase rewrites the block files and their summaries: a key only erased events carried
    /// is no longer named, so no block is read for it; the other keys' ranges stay.
    @Test func anEraseLeavesNoKeyOfTheErasedEvents() throws {
        let folder = TemporaryFolder.made()
        let (log, payloads) = try Self.makeLog(folder)
        let last = UInt64(payloads.count)
        let sequences = (1...last).filter { Self.key(payloads[Int($0 - 1)]) == 11 }
        #expect(sequences.count > 3)
        let before = try LogReader(directory: folder.path).ranges(mayHoldKeysIn: 12...12, function: "test-sum", from: 1, through: last)
        try log.erase(Dictionary(uniqueKeysWithValues: sequences.map { ($0, [UInt8]()) }))
        let reader = try LogReader(directory: folder.path)
        #expect(try reader.ranges(mayHoldKeysIn: 11...11, function: "test-sum", from: 1, through: last) == [])
        let after = try reader.ranges(mayHoldKeysIn: 12...12, function: "test-sum", from: 1, through: last)
        for sequence in (1...last) where Self.key(payloads[Int(sequence - 1)]) == 12 {
            #expect(after.contains { $0.contains(sequence) })
        }
        #expect(before.reduce(0) { $0 + $1.count } >= after.reduce(0) { $0 + $1.count })
        try log.close()
    }

    /// Without a key function no summary is written and every question reads the whole range;
    /// opened again with one, the log builds the missing summaries in the background.
    @Test func openingWithAKeyFunctionBuildsTheMissingSummariesInTheBackground() throws {
        let folder = TemporaryFolder.made()
        let (log, payloads) = try Self.makeLog(folder, keys: nil)
        try log.close()
        #expect(try Self.summaryPaths(folder).isEmpty)
        let last = UInt64(payloads.count)
        #expect(try LogReader(directory: folder.path).ranges(mayHoldKeysIn: 5...5, function: "test-sum", from: 1, through: last) == [1...last])

        var configuration = Format2LogTests.format2(segmentSize: 4096)
        configuration.blockKeys = Self.keys
        configuration.compactsInBackground = true
        let reopened = try EventLog.open(at: folder.path, configuration: configuration)
        reopened.waitForBackgroundCompaction()
        // The sealed segment compacted at open got its summary as it was written; the older
        // block file's was built.
        #expect(try Self.summaryPaths(folder).count == 2)
        let ranges = try LogReader(directory: folder.path).ranges(mayHoldKeysIn: 5...5, function: "test-sum", from: 1, through: last)
        #expect(ranges.reduce(0) { $0 + $1.count } < Int(last) * 2 / 3)
        try reopened.close()
    }

    /// A key function's name is written into every summary: 1 to 16 printable ASCII bytes.
    @Test func aKeyFunctionNeedsAShortPrintableName() throws {
        for name in ["", "seventeen-bytes!!", "with space", "é"] {
            var configuration = Format2LogTests.format2()
            configuration.blockKeys = BlockKeys(name: name) { _ in nil }
            let folder = TemporaryFolder.made()
            #expect(throws: LogError.self, "\"\(name)\"") { try EventLog.open(at: folder.path, configuration: configuration) }
        }
    }
}

extension LogDirectory {
    static func listed(_ path: String) throws -> [DataFile] {
        var directory = LogDirectory(directory: path, fileSystem: PosixFileSystem())
        try directory.refresh()
        return directory.files
    }
}
