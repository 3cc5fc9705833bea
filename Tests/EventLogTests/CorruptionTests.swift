import DemoLog
@testable import EventLog
import Foundation
@testable import LegacyLogWriter
import StorageTestSupport
import Testing

/// Damage that is not a torn tail is found, named (file, offset, sequence), and never
/// skipped: opening or reading stops, and the bytes on disk stay as they were.
@Suite(.heavy) struct CorruptionTests {
    @Test func aFlippedByteInAnEarlierSegmentIsNamedWhenRead() throws {
        let directory = TemporaryFolder.made("flip")
        try makeSegmentedLog(directory.path, events: 200)
        let segments = try segmentFiles(directory.path)
        #expect(segments.count >= 3)
        let batches = batchLocations(try readBytes(segments[0]))
        let target = batches[3]
        try flipByte(at: target.offset + 84 + 5, in: segments[0])
        let before = try snapshot(directory.path)

        let error = expectLogError(.corrupt) { try readAll(directory.path) }
        #expect(error?.file == segments[0])
        #expect(error?.offset == Int64(target.offset))
        #expect(error?.sequence == target.firstSequence)
        #expect(error?.message.contains("fails its checksum") == true)

        // Reading from after the damage is unaffected; verification names the same place.
        #expect(try readAll(directory.path, from: target.firstSequence + 1).count == 200 - Int(target.firstSequence))
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.problems.first { $0.kind == .corruption }?.offset == Int64(target.offset))
        #expect(try snapshot(directory.path) == before)
    }

    @Test func aFlippedByteAtTheEndOfASealedSegmentStopsTheOpen() throws {
        let directory = TemporaryFolder.made("flip-open")
        try makeSegmentedLog(directory.path, events: 200)
        let segments = try segmentFiles(directory.path)
        let last = try #require(batchLocations(try readBytes(segments[1])).last)
        try flipByte(at: last.offset + last.size - 1, in: segments[1])
        let before = try snapshot(directory.path)
        let error = expectLogError(.corrupt) { try EventLog.open(at: directory.path, configuration: legacyConfiguration()) }
        #expect(error?.file == segments[1])
        #expect(error?.offset == Int64(last.offset))
        #expect(error?.sequence == last.firstSequence)
        #expect(try snapshot(directory.path) == before, "a refused open changes nothing")
    }

    /// Every single-byte flip of a small log's segment is either detected, or is in the last
    /// batch and taken as a torn tail; the events read are never wrong.
    @Test func everyFlippedByteOfASegmentIsDetectedOrCutNeverMisread() throws {
        let directory = TemporaryFolder.made("every")
        let original = directory.sub("original")
        let log = try EventLog.open(at: original, configuration: legacyConfiguration())
        try log.append(contentsOf: (1...4 as ClosedRange<UInt64>).map(syntheticPayload))
        try log.append(syntheticPayload(5))
        try log.append(contentsOf: (6...12 as ClosedRange<UInt64>).map(syntheticPayload))
        try log.close()
        let segment = try segmentFiles(original)[0]
        let bytes = try readBytes(segment)
        let lastBatch = try #require(batchLocations(bytes).last)
        var detected = 0
        var tornTails = 0
        for position in 0..<bytes.count {
            let trial = directory.sub("trial")
            try copyDirectory(original, to: trial)
            try flipByte(at: position, in: trial + "/00000000000000000001.seg", mask: 0x10)
            do {
                let cursor = try LogReader(directory: trial).events()
                var events: [LogEvent] = []
                while let event = try cursor.next() { events.append(event) }
                // Not detected as damage: only possible in the last batch, read as a torn tail.
                #expect(position >= lastBatch.offset, "flip at \(position) went unnoticed")
                #expect(events.map(\.sequence) == Array(1...5))
                #expect(events.allSatisfy { SyntheticEvents.isPayload($0.payload, of: $0.sequence) })
                #expect(cursor.incompleteTail != nil)
                tornTails += 1
            } catch let error as LogError {
                #expect([.corrupt, .notALog].contains(error.code), "flip at \(position): \(error)")
                detected += 1
            }
        }
        #expect(detected + tornTails == bytes.count)
        #expect(tornTails == lastBatch.size)
    }

    @Test func aDamagedIndexIsIgnoredByReadersAndRebuiltByTheWriter() throws {
        let directory = TemporaryFolder.made("index")
        let original = directory.sub("original")
        try makeSegmentedLog(original, events: 300, segmentSize: 1 << 20)
        let index = try readBytes(original + "/00000000000000000001.idx")
        #expect(index.count > 24 + 3 * 28, "the log should have several index entries")
        for position in stride(from: 0, to: index.count, by: 3) {
            let trial = directory.sub("trial")
            try copyDirectory(original, to: trial)
            try flipByte(at: position, in: trial + "/00000000000000000001.idx", mask: 0x04)
            let reader = try LogReader(directory: trial)
            for sequence in [1, 150, 299, 300] as [UInt64] {
                #expect(try reader.event(at: sequence).map { SyntheticEvents.isPayload($0.payload, of: sequence) } == true)
            }
            let log = try EventLog.open(at: trial, configuration: legacyConfiguration(indexInterval: 512))
            #expect(log.recovery.rebuiltIndexes == ["00000000000000000001.idx"], "flip at \(position)")
            try log.close()
            #expect(try readBytes(trial + "/00000000000000000001.idx") == index, "the rebuilt index equals the original")
        }
    }

    @Test func aMissingMiddleSegmentIsNamed() throws {
        let directory = TemporaryFolder.made("missing")
        try makeSegmentedLog(directory.path, events: 200)
        let segments = try segmentFiles(directory.path)
        try FileManager.default.removeItem(atPath: segments[1])
        let error = expectLogError(.corrupt) { try EventLog.open(at: directory.path, configuration: legacyConfiguration()) }
        #expect(error?.file == segments[2])
        #expect(error?.message.contains("but the segment before it ends at") == true)
        expectLogError(.corrupt) { try readAll(directory.path) }
        #expect(try LogVerifier.verify(directory: directory.path).problems.contains { $0.file == segments[2] })
    }

    @Test func aSegmentFromAnotherLogIsRefused() throws {
        let directory = TemporaryFolder.made("foreign")
        try makeSegmentedLog(directory.sub("a"), events: 200)
        try makeSegmentedLog(directory.sub("b"), events: 200)
        let a = try segmentFiles(directory.sub("a"))
        let b = try segmentFiles(directory.sub("b"))
        #expect((a[1] as NSString).lastPathComponent == (b[1] as NSString).lastPathComponent)
        try writeBytes(try readBytes(b[1]), to: a[1])
        let error = expectLogError(.corrupt) { try EventLog.open(at: directory.sub("a"), configuration: legacyConfiguration()) }
        #expect(error?.message.contains("belongs to another log") == true)
    }

    /// Re-encodes the batches of a segment from `start` on, with `edit` applied to batch
    /// `start`'s events, and fixes the later batches' links only when `relink` is true.
    func rewrite(_ segmentPath: String, from start: Int, relink: Bool, edit: ([LogEvent]) -> [LogEvent]) throws {
        let bytes = try readBytes(segmentPath)
        let batches = batchLocations(bytes)
        var output = Array(bytes[0..<batches[start].offset])
        var previous = ChainHash(bytes: Array(bytes[batches[start].offset + 44..<batches[start].offset + 76]))
        for (index, location) in batches.enumerated().dropFirst(start) {
            let original = Array(bytes[location.offset..<location.offset + location.size])
            if index > start && !relink {
                output += original
                continue
            }
            let header = try original.withUnsafeBytes { try BatchHeader.decode($0).get() }
            let decoded = try original.withUnsafeBytes {
                try DecodedBatch.decode(header, stored: UnsafeRawBufferPointer(rebasing: $0[84...]), decompressor: ZstdDecompressor()).get()
            }
            var builder = BatchBuilder()
            for event in index == start ? edit(decoded.events) : decoded.events {
                builder.add(Array(event.payload), at: event.timestamp)
            }
            var encoded: [UInt8] = []
            _ = builder.encode(
                firstSequence: header.firstSequence, previousHash: previous, compressor: try ZstdCompressor(level: 3),
                into: &encoded)
            previous = ChainHash.of(encoded)
            output += encoded
        }
        try writeBytes(output, to: segmentPath)
    }

    @Test func anAlteredBatchWithValidChecksumsBreaksTheChain() throws {
        let directory = TemporaryFolder.made("chain")
        let log = try EventLog.open(at: directory.path, configuration: legacyConfiguration())
        for sequence in 1...6 as ClosedRange<UInt64> { try log.append(syntheticPayload(sequence)) }
        try log.close()
        let segment = try segmentFiles(directory.path)[0]
        let originalHead = try LogVerifier.verify(directory: directory.path).headHash

        // Batch 2 (event 2) gets other bytes; its own checksums are valid again.
        try rewrite(segment, from: 1, relink: false) { events in
            events.map { LogEvent(sequence: $0.sequence, timestamp: $0.timestamp, payload: ArraySlice(Array("forged".utf8))) }
        }
        let batches = batchLocations(try readBytes(segment))
        let error = expectLogError(.corrupt) { try readAll(directory.path) }
        #expect(error?.offset == Int64(batches[2].offset), "the next batch's previous_hash exposes the change")
        #expect(error?.message.contains("hash chain is broken") == true)
        let report = try LogVerifier.verify(directory: directory.path)
        #expect(report.problems.first?.offset == Int64(batches[2].offset))

        // Rewriting the whole rest of the chain passes verification, but changes the head hash:
        // a head hash recorded elsewhere exposes it.
        try rewrite(segment, from: 1, relink: true) { $0 }
        let relinked = try LogVerifier.verify(directory: directory.path)
        #expect(relinked.eventsAreIntact)
        #expect(relinked.headHash != originalHead)
    }

    @Test func removedOrReorderedBatchesAreDetected() throws {
        let directory = TemporaryFolder.made("reorder")
        let original = directory.sub("original")
        let log = try EventLog.open(at: original, configuration: legacyConfiguration())
        for sequence in 1...5 as ClosedRange<UInt64> { try log.append(syntheticPayload(sequence)) }
        try log.close()
        let bytes = try readBytes(original + "/00000000000000000001.seg")
        let b = batchLocations(bytes)
        func slice(_ location: BatchLocation) -> [UInt8] { Array(bytes[location.offset..<location.offset + location.size]) }
        let variants: [(String, [UInt8], Int)] = [
            ("batch 2 removed", Array(bytes[0..<b[1].offset]) + slice(b[2]) + slice(b[3]) + slice(b[4]), b[1].offset),
            ("batches 2 and 3 swapped", Array(bytes[0..<b[1].offset]) + slice(b[2]) + slice(b[1]) + slice(b[3]) + slice(b[4]), b[1].offset),
        ]
        for (name, altered, offset) in variants {
            let trial = directory.sub("trial")
            try copyDirectory(original, to: trial)
            try writeBytes(altered, to: trial + "/00000000000000000001.seg")
            let error = expectLogError(.corrupt) { try readAll(trial) }
            #expect(error?.offset == Int64(offset), "\(name)")
            #expect(error?.sequence == 2, "\(name)")
            expectLogError(.corrupt) { try EventLog.open(at: trial, configuration: legacyConfiguration()) }
        }
    }
}
