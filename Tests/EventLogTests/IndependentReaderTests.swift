import EventLog
import FieldColumns
import Foundation
import StorageTestSupport
import Testing

/// The independent reader (written from docs/FORMAT.md alone) against real stores made by the
/// app's code, in both formats: every event's sequence, time and payload, and the head hash,
/// must equal what the module's own reader and verifier say. Where they differ, the document
/// does not describe what the code writes.
@Suite struct IndependentReaderTests {
    typealias Event = (time: Int64, payload: [UInt8])

    /// Checks the independent reading of `path` against the module's reader and verifier.
    static func expectSameAsTheModule(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> IndependentLog {
        let independent = try IndependentReader.read(path)
        let real = try readAll(path)
        #expect(independent.events.count == real.count, sourceLocation: sourceLocation)
        #expect(independent.events == real.map {
            IndependentLog.Event(sequence: $0.sequence, time: $0.timestamp.microsecondsSinceEpoch, payload: Array($0.payload))
        }, sourceLocation: sourceLocation)
        let report = try LogVerifier.verify(directory: path, payloadCodec: FieldColumnsCodec())
        #expect(report.isClean, "\(report.problems)", sourceLocation: sourceLocation)
        #expect(report.headHash?.bytes == independent.head, "head hash", sourceLocation: sourceLocation)
        return independent
    }

    /// Appends `events` in commits of 1, 2 or 3 with their own times.
    static func append(_ events: [Event], to log: EventLog) throws {
        var start = 0
        while start < events.count {
            let commit = events[start..<min(events.count, start + 1 + start % 3)]
            try log.append(
                contentsOf: commit.map(\.payload), timestamps: commit.map { LogTimestamp(microsecondsSinceEpoch: $0.time) })
            start += commit.count
        }
    }

    /// Events after `time`: random payloads (zstd cannot shrink them) or repeated words.
    static func events(_ count: Int, after time: Int64, seed: UInt64, compressible: Bool) -> [Event] {
        let base = Format2CodecTests.events(count, seed: seed, compressible: compressible)
        let shift = time - base[0].time + 1
        return base.map { ($0.time + shift, $0.payload) }
    }

    @Test func aFormat2StoreOfBlockFilesAndSegmentsReadsTheSame() throws {
        let folder = TemporaryFolder.made("independent")
        var settings = Format2LogTests.format2(segmentSize: 4096)
        settings.blockSize = 2048
        settings.blockLayout = .rows
        // Codecs 0 and 1 here; IndependentReaderCodec2Tests reads codec 2.
        settings.payloadCodec = nil
        // Rows, from random payloads: raw blocks.
        var log = try EventLog.open(at: folder.path, configuration: settings)
        let first = Self.events(150, after: 1_700_000_000_000_000, seed: 7, compressible: false)
        try Self.append(first, to: log)
        try log.compact()
        try log.close()
        // Columns, from repeated words: zstd blocks; then more segments left in the hot tail.
        settings.blockLayout = .columns
        log = try EventLog.open(at: folder.path, configuration: settings)
        let second = Self.events(150, after: first.last!.time, seed: 8, compressible: true)
        try Self.append(second, to: log)
        try log.compact()
        let third = Self.events(150, after: second.last!.time, seed: 9, compressible: true)
        try Self.append(third, to: log)
        try log.close()

        let independent = try Self.expectSameAsTheModule(folder.path)
        #expect(independent.format == 2)
        #expect(independent.events.map(\.payload) == (first + second + third).map(\.payload))
        #expect(independent.blockFiles == 2)
        #expect(independent.segments >= 2)
        #expect(independent.blockKinds.isSuperset(of: [[0, 0], [1, 1]]), "raw rows and zstd columns blocks")
        #expect(independent.recordCodecs == [0, 1], "raw and zstd records")
        let reader = try LogReader(directory: folder.path)
        #expect(try reader.head(at: UInt64(independent.events.count))?.hash.bytes == independent.head)
    }

    /// An open log's active segment ends in preallocated zeros: the end of data.
    @Test func anOpenFormat2StoreWithItsZeroTailReadsTheSame() throws {
        let folder = TemporaryFolder.made("independent")
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2())
        defer { try? log.close() }
        try Self.append(Self.events(30, after: 1_700_000_000_000_000, seed: 4, compressible: true), to: log)
        #expect(try readBytes(folder.sub("00000000000000000001.seg")).last == 0, "zeros ahead of the data")
        #expect(try Self.expectSameAsTheModule(folder.path).events.count == 30)
    }

    @Test func aCompactionsLeftoverSegmentsAreHiddenByItsBlockFile() throws {
        let folder = TemporaryFolder.made("independent")
        let settings = Format2LogTests.format2(segmentSize: 4096)
        let log = try EventLog.open(at: folder.path, configuration: settings)
        try Self.append(Self.events(120, after: 1_700_000_000_000_000, seed: 3, compressible: false), to: log)
        try log.close()
        let segments = try snapshot(folder.path).filter { $0.key.hasSuffix(".seg") }
        let compacting = try EventLog.open(at: folder.path, configuration: settings)
        try compacting.compact()
        try compacting.close()
        // As if the compactor stopped after its rename (step 6): the old segments are back.
        for (name, bytes) in segments where !FileManager.default.fileExists(atPath: folder.sub(name)) {
            try writeBytes(bytes, to: folder.sub(name))
        }
        let independent = try Self.expectSameAsTheModule(folder.path)
        #expect(independent.hiddenSegments == segments.count)
    }

    @Test func theFormat1FixtureReadsTheSame() throws {
        let independent = try Self.expectSameAsTheModule(FixtureTests.fixturePath)
        #expect(independent.format == 1)
        #expect(IndependentBytes.hexText(independent.head) == FixtureTests.headHash)
        #expect(independent.batchCodecs == [0, 1], "raw and zstd batches")
        #expect(independent.segments > 2)
    }

    @Test func aFormat1LogWrittenTodayReadsTheSame() throws {
        let folder = TemporaryFolder.made("independent")
        let clock = TestClock()
        let log = try EventLog.open(at: folder.sub("log"), configuration: legacyConfiguration(clock: clock, segmentSize: 4096))
        for commit in 0..<60 {
            let words = String(repeating: "harbour sunset \(commit) ", count: commit % 7 + 1)
            try log.append(contentsOf: (0...(commit % 4)).map { Array("\($0) \(words)".utf8) })
            clock.advance(microseconds: Int64(commit % 3) * 700)
        }
        try log.close()
        let independent = try Self.expectSameAsTheModule(folder.sub("log"))
        #expect(independent.format == 1)
        #expect(independent.batchCodecs == [0, 1])
        #expect(independent.segments > 1)
    }

    @Test func aFlippedByteInABlockFileIsRefused() throws {
        let folder = TemporaryFolder.made("independent")
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2())
        try Self.append(Self.events(40, after: 1_700_000_000_000_000, seed: 5, compressible: true), to: log)
        try log.compact()
        try log.close()
        let path = folder.sub("00000000000000000001.blk")
        let size = try readBytes(path).count
        for offset in [20, 130, 200, size - 1] {
            try flipByte(at: offset, in: path)
            #expect(throws: FormatRuleBroken.self, "offset \(offset)") { try IndependentReader.read(folder.path) }
            try flipByte(at: offset, in: path)
        }
        #expect(try IndependentReader.read(folder.path).events.count == 40)
    }
}
