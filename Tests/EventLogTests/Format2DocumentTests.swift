import EventLog
import Foundation
import StorageTestSupport
import Testing

/// docs/FORMAT.md's worked example of format 2 is produced by the real writer and its
/// compaction, then dumped and checked by code written from the document alone (``Format2Dump``,
/// ``IndependentReader``). The document must show exactly that dump.
///
/// To refresh the page after a deliberate format change:
/// `VT_UPDATE_FORMAT_DOC=1 swift test --filter FormatDocument`.
@Suite struct Format2DocumentTests {
    static let begin = "<!-- worked-example-2:begin -->"
    static let end = "<!-- worked-example-2:end -->"
    static let start: Int64 = 1_700_000_000_000_000
    /// Long enough for a record to try zstd (bodies of at least 256 bytes), and repetitive.
    static let longPayload = Array(String(repeating: "pin photo album ", count: 20).utf8)

    /// zstd frames are bytes of one libzstd version: the dump names the one that made them.
    static var zstdLine: String { "zstd frames made by libzstd \(IndependentBytes.zstdVersion), level 3\n\n" }

    /// Whether the document's frames come from the libzstd linked here. Another version makes
    /// other, equally valid frames; the example is then only decoded, not compared byte for byte.
    static var documentUsesThisZstd: Bool {
        if ProcessInfo.processInfo.environment["VT_UPDATE_FORMAT_DOC"] == "1" { return true }
        return (try? String(contentsOfFile: FormatDocumentTests.documentPath, encoding: .utf8))
            .map { $0.contains(Self.begin + "\n```\n" + Self.zstdLine) } ?? false
    }

    typealias Stage = (title: String, files: [(name: String, bytes: [UInt8])])

    /// Writes the example described in FORMAT.md; returns its directory and the data files at
    /// each stage.
    static func writeExample(in directory: TemporaryFolder) throws -> (path: String, stages: [Stage]) {
        let clock = TestClock(start)
        var settings = Format2LogTests.format2(clock: clock)
        settings.newLogID = Array(0..<16).map { UInt8($0) &* 0x11 }
        settings.blockSize = 256
        // The example shows codec 1 byte for byte; codec 2's field forms are covered by
        // IndependentReaderCodec2Tests and IndependentFieldColumnsTests.
        settings.payloadCodec = nil
        let path = directory.sub("example")
        var log = try EventLog.open(at: path, configuration: settings)
        try log.append(contentsOf: [Array("hello".utf8), Array("world".utf8)])
        clock.advance(microseconds: 1_500)
        try log.append(Array("again".utf8))
        clock.advance(microseconds: 1_250)
        try log.append(longPayload)
        try log.close()
        let before = try dataFiles(path)

        clock.advance(microseconds: 1_000_000)
        log = try EventLog.open(at: path, configuration: settings)
        try log.compact()
        let later = clock.now().microsecondsSinceEpoch + 250
        try log.append(
            contentsOf: [Array("bye".utf8), Array("for now".utf8)],
            timestamps: [later, later + 2_000].map { LogTimestamp(microsecondsSinceEpoch: $0) })
        try log.close()
        return (path, [
            ("stage 1: three appends, then the log closed", before),
            ("stage 2: reopened, compacted (EventLog.compact()), one more append, closed", try dataFiles(path)),
        ])
    }

    static func dataFiles(_ path: String) throws -> [(name: String, bytes: [UInt8])] {
        try FileManager.default.contentsOfDirectory(atPath: path)
            .filter { $0.hasSuffix(".seg") || $0.hasSuffix(".blk") }.sorted()
            .map { ($0, try readBytes(path + "/" + $0)) }
    }

    static func dump(_ example: (path: String, stages: [Stage])) throws -> (text: String, log: IndependentLog) {
        let log = try IndependentReader.read(example.path)
        return (zstdLine + (try Format2Dump.describe(stages: example.stages, log: log)), log)
    }

    @Test(.enabled(if: documentUsesThisZstd, "the document's zstd frames were made by another libzstd"))
    func workedExampleMatchesTheDocument() throws {
        let directory = TemporaryFolder.made("format2")
        let (text, _) = try Self.dump(try Self.writeExample(in: directory))
        try FormatDocumentTests.expectSection(text, between: Self.begin, and: Self.end)
    }

    /// Runs whatever the libzstd: the example has each thing the document promises to show,
    /// and the independent reading equals the module's.
    @Test func workedExampleShowsEveryPartAndReadsTheSameIndependently() throws {
        let directory = TemporaryFolder.made("format2")
        let example = try Self.writeExample(in: directory)
        let (text, log) = try Self.dump(example)
        #expect(example.stages.map { $0.files.map(\.name) } == [
            ["00000000000000000001.seg"], ["00000000000000000001.blk", "00000000000000000005.seg"],
        ])
        #expect(text.contains("× 2 + codec 1 (zstd)"), "a zstd record")
        #expect(log.blockKinds == [[0, 1], [1, 1]], "a raw and a zstd block, both in columns")
        #expect(text.contains("chain_before = head(4)"), "the second segment's checkpoint")

        let real = try readAll(example.path)
        #expect(log.events.map(\.sequence) == real.map(\.sequence))
        #expect(log.events.map(\.time) == real.map(\.timestamp.microsecondsSinceEpoch))
        #expect(log.events.map(\.payload) == real.map { Array($0.payload) })
        #expect(log.events.map(\.time) == [0, 0, 1_500, 2_750, 1_003_000, 1_005_000].map { Self.start + $0 })
        #expect(try LogReader(directory: example.path).head(at: 6)?.hash.bytes == log.head)
    }
}
