import DemoLog
import EventLog
import Foundation
import SeededRandom
import StorageTestSupport
import Testing

/// A crash in the middle of an append leaves a torn last batch. Opening the log for writing
/// cuts it off, reports it, keeps a copy, and carries on after the batches before it.
@Suite(.heavy) struct TornTailTests {
    /// The shape of the log's last batch.
    enum LastBatch: String, CaseIterable, Sendable {
        /// A single tiny event, stored raw.
        case small
        /// Twenty events, zstd-compressed.
        case compressed
    }

    /// Writes four batches and returns (segment path, offset of the last batch, events before it).
    func makeLog(_ path: String, lastBatch: LastBatch) throws -> (String, Int64, Int) {
        let log = try EventLog.open(at: path, configuration: legacyConfiguration())
        try log.append(contentsOf: (1...3 as ClosedRange<UInt64>).map(syntheticPayload))
        try log.append(syntheticPayload(4))
        try log.append(contentsOf: (5...9 as ClosedRange<UInt64>).map(syntheticPayload))
        try log.close()
        let segment = try segmentFiles(path)[0]
        let offset = Int64(try readBytes(segment).count)
        let log2 = try EventLog.open(at: path, configuration: legacyConfiguration())
        switch lastBatch {
        case .small: try log2.append([42])
        case .compressed: try log2.append(contentsOf: (10...29 as ClosedRange<UInt64>).map(syntheticPayload))
        }
        try log2.close()
        return (segment, offset, 9)
    }

    @Test(arguments: LastBatch.allCases)
    func cuttingTheLastBatchAtEveryOffsetRecoversTheEarlierBatches(_ lastBatch: LastBatch) throws {
        let directory = TemporaryFolder.made("torn")
        let original = directory.sub("original")
        let (segment, lastOffset, kept) = try makeLog(original, lastBatch: lastBatch)
        let whole = try readBytes(segment)
        let lastSize = whole.count - Int(lastOffset)
        if lastBatch == .compressed { #expect(whole[Int(lastOffset) + 5] == 1, "the last batch should be zstd") }

        for cut in Int(lastOffset)..<whole.count {
            let trial = directory.sub("trial")
            try copyDirectory(original, to: trial)
            let trialSegment = trial + "/" + (segment as NSString).lastPathComponent
            try writeBytes(Array(whole[0..<cut]), to: trialSegment)

            let log = try EventLog.open(at: trial, configuration: legacyConfiguration())
            #expect(log.lastSequence == UInt64(kept), "cut at \(cut)")
            if cut == Int(lastOffset) {
                #expect(log.recovery.cutTail == nil, "a cut on the batch boundary leaves nothing torn")
            } else {
                let torn = try #require(log.recovery.cutTail, "cut at \(cut)")
                #expect(torn.offset == lastOffset)
                #expect(torn.bytes == Int64(cut) - lastOffset)
                #expect(torn.firstLostSequence == UInt64(kept) + 1)
                // The header says how many events were lost once all 84 bytes of it survived.
                let headerIntact = cut - Int(lastOffset) >= 84
                #expect(torn.events == (headerIntact ? (lastBatch == .small ? 1 : 20) : nil), "cut at \(cut)")
                #expect(try readBytes(torn.copy) == Array(whole[Int(lastOffset)..<cut]))
                #expect(try readBytes(trialSegment).count == Int(lastOffset))
            }
            // Appends continue right after the surviving batches.
            #expect(try log.append(syntheticPayload(UInt64(kept) + 1)) == UInt64(kept) + 1)
            try log.close()
            let events = try readAll(trial)
            #expect(events.map(\.sequence) == Array(1...UInt64(kept + 1)), "cut at \(cut)")
            #expect(events.allSatisfy { SyntheticEvents.isPayload($0.payload, of: $0.sequence) })
        }
        #expect(lastSize > (lastBatch == .small ? 84 : 200))
    }

    /// After a power cut, an unsynced batch can come back as zeros or garbage over its full
    /// length: still a torn tail, since nothing valid follows it.
    @Test func aZeroedOrGarbledLastBatchIsCutLikeATornOne() throws {
        let directory = TemporaryFolder.made("garbled")
        let original = directory.sub("original")
        let (segment, lastOffset, kept) = try makeLog(original, lastBatch: .compressed)
        let whole = try readBytes(segment)
        var generator = SplitMix(seed: 11)
        let variants: [(String, [UInt8])] = [
            ("payload zeroed", Array(whole[0..<Int(lastOffset) + 84]) + [UInt8](repeating: 0, count: whole.count - Int(lastOffset) - 84)),
            ("one payload byte flipped", whole.enumerated().map { $0.offset == whole.count - 3 ? $0.element ^ 0x40 : $0.element }),
            ("garbage after the data", whole + (0..<500).map { _ in UInt8.random(in: 1...255, using: &generator) }),
            ("garbage past a zero tail", whole + [UInt8](repeating: 0, count: 300) + [7, 7, 7]),
        ]
        for (name, bytes) in variants {
            let trial = directory.sub("trial")
            try copyDirectory(original, to: trial)
            try writeBytes(bytes, to: trial + "/" + (segment as NSString).lastPathComponent)
            let log = try EventLog.open(at: trial, configuration: legacyConfiguration())
            let torn = try #require(log.recovery.cutTail, "\(name)")
            let expectedKept = name.hasPrefix("garbage") ? kept + 20 : kept
            #expect(log.lastSequence == UInt64(expectedKept), "\(name)")
            #expect(torn.offset == (name.hasPrefix("garbage") ? Int64(whole.count) : lastOffset), "\(name)")
            try log.close()
            #expect(try readAll(trial).count == expectedKept, "\(name)")
            #expect(try LogVerifier.verify(directory: trial).isClean, "\(name)")
        }
    }

    /// A writer killed without closing leaves its preallocated zeros: that is a clean end, not
    /// damage, and readers see every event before it.
    @Test func aPreallocatedZeroTailIsACleanEnd() throws {
        let directory = TemporaryFolder.made("zeros")
        let log = try EventLog.open(at: directory.path, configuration: legacyConfiguration())
        for sequence in 1...50 as ClosedRange<UInt64> { try log.append(syntheticPayload(sequence)) }
        let segment = try segmentFiles(directory.path)[0]
        let size = try readBytes(segment).count
        #expect(size == 1 << 20, "under .always the segment is preallocated to 1 MiB")
        // Copy the files as they are now, as if the process had been killed.
        let elsewhere = TemporaryFolder.made("crashed")
        let crashed = elsewhere.sub("log")
        try copyDirectory(directory.path, to: crashed)
        try log.close()
        #expect(try readAll(crashed).count == 50)
        let reopened = try EventLog.open(at: crashed, configuration: legacyConfiguration())
        #expect(reopened.recovery.cutTail == nil)
        #expect(reopened.lastSequence == 50)
        #expect(try reopened.append(syntheticPayload(51)) == 51)
        try reopened.close()
        #expect(try readAll(crashed).count == 51)
    }

    /// A reader meeting a torn tail stops before it without an error and says where.
    @Test func aReaderStopsBeforeATornTailAndSaysWhere() throws {
        let directory = TemporaryFolder.made("reader")
        let (segment, lastOffset, kept) = try makeLog(directory.path, lastBatch: .compressed)
        let whole = try readBytes(segment)
        try writeBytes(Array(whole.dropLast(10)), to: segment)
        let cursor = try LogReader(directory: directory.path).events()
        var count = 0
        while try cursor.next() != nil { count += 1 }
        #expect(count == kept)
        #expect(cursor.incompleteTail?.offset == lastOffset)
        #expect(cursor.incompleteTail?.file == segment)
    }
}
