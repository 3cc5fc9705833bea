import EventLog
import Foundation
import StorageTestSupport
import Testing

/// docs/FORMAT.md's worked example is produced by the real writer and decoded here by an
/// independent reader written from the document's tables alone. The document must show
/// exactly this dump, so the page and the code cannot drift apart.
///
/// To refresh the page after a deliberate format change:
/// `VT_UPDATE_FORMAT_DOC=1 swift test --filter FormatDocumentTests`.
@Suite struct FormatDocumentTests {
    static let documentPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/FORMAT.md").path
    static let begin = "<!-- worked-example:begin -->"
    static let end = "<!-- worked-example:end -->"

    /// Writes the example log described in FORMAT.md and returns its directory.
    static func writeExample(in directory: TemporaryFolder) throws -> String {
        let clock = TestClock(1_700_000_000_000_000)
        var settings = legacyConfiguration(clock: clock)
        settings.newLogID = Array(0..<16).map { UInt8($0) &* 0x11 }
        let path = directory.sub("example")
        let log = try EventLog.open(at: path, configuration: settings)
        try log.append(contentsOf: [Array("hello".utf8), Array("world".utf8)])
        clock.advance(microseconds: 1_500)
        try log.append(Array("again".utf8))
        try log.close()
        return path
    }

    /// Expects FORMAT.md to show `dump` as a code block between the markers `begin` and `end`,
    /// or with `VT_UPDATE_FORMAT_DOC=1` writes it there.
    static func expectSection(
        _ dump: String, between begin: String, and end: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let document = try String(contentsOfFile: documentPath, encoding: .utf8)
        let block = begin + "\n```\n" + dump + "```\n" + end
        guard let start = document.range(of: begin), let stop = document.range(of: end) else {
            Issue.record("FORMAT.md lacks the markers \(begin) and \(end)", sourceLocation: sourceLocation)
            return
        }
        let current = String(document[start.lowerBound..<stop.upperBound])
        if ProcessInfo.processInfo.environment["VT_UPDATE_FORMAT_DOC"] == "1", current != block {
            try document.replacingCharacters(in: start.lowerBound..<stop.upperBound, with: block)
                .write(toFile: documentPath, atomically: true, encoding: .utf8)
            return
        }
        #expect(current == block, "docs/FORMAT.md's worked example differs from what the writer produces", sourceLocation: sourceLocation)
    }

    @Test func workedExampleMatchesTheDocument() throws {
        let directory = TemporaryFolder.made("format")
        let path = try Self.writeExample(in: directory)
        let segment = try Array(Data(contentsOf: URL(fileURLWithPath: path + "/00000000000000000001.seg")))
        let index = try Array(Data(contentsOf: URL(fileURLWithPath: path + "/00000000000000000001.idx")))
        let dump = try IndependentDump.describe(segment: segment, index: index)

        try Self.expectSection(dump, between: Self.begin, and: Self.end)

        // And the real reader agrees with the independent one.
        let events = try readAll(path)
        #expect(events.map { String(decoding: $0.payload, as: UTF8.self) } == ["hello", "world", "again"])
        #expect(events.map(\.timestamp.microsecondsSinceEpoch) == [1_700_000_000_000_000, 1_700_000_000_000_000, 1_700_000_000_001_500])
    }
}

/// A reader of the format written from FORMAT.md's tables, independent of the module's code:
/// it prints each field with its offset and meaning, and checks every checksum and hash.
enum IndependentDump: FormatBytes {
    static func describe(segment: [UInt8], index: [UInt8]) throws -> String {
        var out = "00000000000000000001.seg (\(segment.count) bytes)\n\n"
        out += "segment header\n"
        out += field(segment, 0, 8, "magic \"VTLOGSEG\"")
        out += field(segment, 8, 2, "version \(u16(segment, 8))")
        out += field(segment, 10, 6, "reserved")
        out += field(segment, 16, 8, "first_sequence \(u64(segment, 16))")
        out += field(segment, 24, 16, "log_id")
        out += field(segment, 40, 8, "created_at \(i64(segment, 40))")
        out += field(segment, 48, 12, "reserved")
        try check(crc32c(segment[0..<60]) == u32(segment, 60), "segment header_crc")
        out += field(segment, 60, 4, "header_crc = CRC32C(bytes 0..<60)")
        var previous = sha256(Array(segment[0..<64]))
        out += "\ngenesis = SHA-256(segment header) =\n  \(hexText(previous))\n"

        var offset = 64
        var number = 1
        while offset < segment.count {
            let base = offset
            out += "\nbatch \(number) at offset \(base)\n"
            out += field(segment, base, 4, "magic \"VTLB\"")
            out += field(segment, base + 4, 1, "version \(segment[base + 4])")
            out += field(segment, base + 5, 1, "codec \(segment[base + 5]) (\(segment[base + 5] == 0 ? "raw" : "zstd"))")
            out += field(segment, base + 6, 2, "reserved")
            let first = u64(segment, base + 8)
            let count = u32(segment, base + 16)
            let stored = Int(u32(segment, base + 20))
            out += field(segment, base + 8, 8, "first_sequence \(first)")
            out += field(segment, base + 16, 4, "event_count \(count)")
            out += field(segment, base + 20, 4, "stored_length \(stored)")
            out += field(segment, base + 24, 4, "raw_length \(u32(segment, base + 24))")
            out += field(segment, base + 28, 8, "first_timestamp \(i64(segment, base + 28))")
            out += field(segment, base + 36, 8, "last_timestamp \(i64(segment, base + 36))")
            try check(Array(segment[base + 44..<base + 76]) == previous, "previous_hash of batch \(number)")
            out += field(segment, base + 44, 32, number == 1 ? "previous_hash = genesis" : "previous_hash = SHA-256(batch \(number - 1))")
            let payload = segment[base + 84..<base + 84 + stored]
            try check(crc32c(segment[base..<base + 76] + payload) == u32(segment, base + 76), "batch_crc")
            out += field(segment, base + 76, 4, "batch_crc = CRC32C(header bytes 0..<76 + payload)")
            try check(crc32c(segment[base..<base + 80]) == u32(segment, base + 80), "header_crc")
            out += field(segment, base + 80, 4, "header_crc = CRC32C(header bytes 0..<80)")
            try check(segment[base + 5] == 0, "the example's batches are stored raw")
            var position = base + 84
            var sequence = first
            while position < base + 84 + stored {
                let start = position
                let delta = try varint(segment, &position)
                let length = Int(try varint(segment, &position))
                let text = String(decoding: segment[position..<position + length], as: UTF8.self)
                position += length
                out += field(segment, start, position - start, "event \(sequence): time_delta \(delta), length \(length), \"\(text)\"")
                sequence += 1
            }
            previous = sha256(Array(segment[base..<base + 84 + stored]))
            out += "SHA-256(batch \(number)) =\n  \(hexText(previous))\n"
            offset = base + 84 + stored
            number += 1
        }

        out += "\n00000000000000000001.idx (\(index.count) bytes)\n\n"
        out += field(index, 0, 8, "magic \"VTLOGIDX\"")
        out += field(index, 8, 2, "version \(u16(index, 8))")
        out += field(index, 10, 2, "reserved")
        out += field(index, 12, 8, "first_sequence \(u64(index, 12))")
        try check(crc32c(index[0..<20]) == u32(index, 20), "index header_crc")
        out += field(index, 20, 4, "header_crc = CRC32C(bytes 0..<20)")
        var entry = 24
        while entry + 28 <= index.count {
            out += field(index, entry, 8, "entry: sequence \(u64(index, entry))")
            out += field(index, entry + 8, 8, "       timestamp \(i64(index, entry + 8))")
            out += field(index, entry + 16, 8, "       offset \(u64(index, entry + 16))")
            try check(crc32c(index[entry..<entry + 24]) == u32(index, entry + 24), "index entry_crc")
            out += field(index, entry + 24, 4, "       entry_crc = CRC32C(entry bytes 0..<24)")
            entry += 28
        }
        return out
    }
}
