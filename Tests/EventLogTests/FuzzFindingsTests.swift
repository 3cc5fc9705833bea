import DemoLog
@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// The log's crashes that fuzzing found (Fuzz/Regressions/FuzzBatch, docs/RELIABILITY.md),
/// each kept as a test of the library, so that it stays fixed without the fuzzing build.
@Suite struct FuzzFindingsTests {
    /// A batch header whose checksum holds but whose `stored_length` claims nearly 4 GiB, at
    /// the end of a small segment: it reads as a torn tail, and the reader never asks for
    /// more memory than the file holds (it used to allocate the claimed length).
    @Test func aBatchClaimingFourGigabytesIsATornTailNotAnAllocation() throws {
        let directory = TemporaryFolder.made("huge-batch")
        try makeSegmentedLog(directory.path, events: 20, segmentSize: 1 << 20)
        let segment = directory.sub("00000000000000000001.seg")
        var bytes = try readBytes(segment)
        let last = try #require(batchLocations(bytes).last)
        #expect(last.firstSequence == 20)
        setField(UInt32(0xFFFF_FFF0), in: &bytes, at: last.offset + 20)
        setField(IndependentBytes.crc32c(bytes[last.offset..<last.offset + 80]), in: &bytes, at: last.offset + 80)
        try writeBytes(bytes, to: segment)

        let file = RecordingFile(try PosixFileSystem().openFile(segment, .readOnly))
        let window = ReadWindow(file: file)
        #expect(try window.bytes(at: Int64(last.offset), count: 84 + 0xFFFF_FFF0) == nil)
        // At most one chunk of the window (1 MiB), whatever the header claims.
        #expect(file.largestRead <= 1 << 20, "asked for \(file.largestRead) bytes of a \(file.bytes)-byte file")
        window.close()

        // Readers stop before the damage; the writer cuts it as the torn last batch.
        #expect(try readAll(directory.path).map(\.sequence) == Array(1...19))
        let log = try EventLog.open(at: directory.path, configuration: legacyConfiguration())
        #expect(log.lastSequence == 19)
        try log.close()
    }

    /// An index entry, its checksum intact, that points near Int64.max: `offset + length`
    /// overflowed and trapped. The entry leads nowhere, so readers fall back to the segment.
    @Test func anIndexOffsetNearTheLargestIntegerIsIgnored() throws {
        let directory = TemporaryFolder.made("far-index")
        try makeSegmentedLog(directory.path, events: 300, segmentSize: 1 << 20)
        let index = directory.sub("00000000000000000001.idx")
        var bytes = try readBytes(index)
        #expect(bytes.count >= 24 + 3 * 28, "the log should have several index entries")
        let entry = 24 + 28  // the second entry
        setField(UInt64(0x7FFF_FFFF_FFFF_FFF0), in: &bytes, at: entry + 16)
        setField(IndependentBytes.crc32c(bytes[entry..<entry + 24]), in: &bytes, at: entry + 24)
        try writeBytes(bytes, to: index)

        let window = ReadWindow(file: try PosixFileSystem().openFile(index, .readOnly))
        #expect(try window.bytes(at: Int64.max - 16, count: 84) == nil)
        #expect(try window.bytes(at: -1, count: 1) == nil)
        window.close()

        let reader = try LogReader(directory: directory.path)
        for sequence in [1, 150, 299, 300] as [UInt64] {
            #expect(try reader.event(at: sequence).map { SyntheticEvents.isPayload($0.payload, of: sequence) } == true)
        }
        #expect(try readAll(directory.path).count == 300)
    }

    /// The writer thread's closure held the group commit: every closed log stayed in memory
    /// with its buffers and zstd context.
    @Test func aClosedLogIsFreed() throws {
        let directory = TemporaryFolder.made("freed")
        weak var commit: GroupCommit?
        try {
            let log = try EventLog.open(at: directory.path, configuration: legacyConfiguration(durability: .none))
            commit = log.core
            try log.append(syntheticPayload(1))
            try log.close()
        }()
        #expect(commit == nil)
    }

    /// A timestamp from a damaged log or an import can be any 64-bit number; printing the
    /// earliest one overflowed.
    @Test func theExtremeTimestampsPrint() {
        #expect(LogTimestamp(microsecondsSinceEpoch: Int64.min).description.hasSuffix(".224192Z"))
        #expect(LogTimestamp(microsecondsSinceEpoch: Int64.max).description.hasSuffix(".775807Z"))
        #expect(LogTimestamp(microsecondsSinceEpoch: -1).description == "1969-12-31T23:59:59.999999Z")
        #expect(LogTimestamp(microsecondsSinceEpoch: -1_000_000).description == "1969-12-31T23:59:59.000000Z")
    }
}

/// A file that remembers the largest read it was asked for.
final class RecordingFile: RandomAccessFile {
    private let file: any RandomAccessFile
    private(set) var largestRead = 0
    let bytes: Int64

    init(_ file: any RandomAccessFile) {
        self.file = file
        bytes = (try? file.size()) ?? 0
    }

    var path: String { file.path }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        largestRead = max(largestRead, buffer.count)
        return try file.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws { try file.write(bytes, at: offset) }
    func size() throws -> Int64 { try file.size() }
    func truncate(to size: Int64) throws { try file.truncate(to: size) }
    func sync() throws { try file.sync() }
    func close() throws { try file.close() }
}
