@testable import EventLog
import Foundation
import StorageTestSupport
import Synchronization
import Testing

/// The log knows no payload format: a codec handed to it (``BlockPayloadCodec``) fills codec 2's
/// slot in the blocks, and the log frames, checks, chains, compacts and erases around it. These
/// tests plug in a plain codec of their own (each payload's bytes turned over with a mask), not
/// the app's field columns.
@Suite struct PayloadCodecTests {
    /// Counts its calls, so a test sees the log used it.
    final class Calls: Sendable {
        let encoded = Atomic(0)
        let rebuilt = Atomic(0)
    }

    /// A form that is the raw payload's head, then each payload's length and bytes masked with
    /// 0xA5: no smaller than the raw payload, but just as compressible, so zstd keeps it.
    struct MaskingCodec: BlockPayloadCodec {
        let calls = Calls()
        /// When false, the encoder says these payloads have no form (the block falls back).
        var hasForm = true

        func makeEncoder() -> any BlockPayloadEncoder { Encoder(calls: calls, hasForm: hasForm) }

        func rebuild(_ form: UnsafeRawBufferPointer, count: Int, rawLength: Int) -> Result<[UInt8], DamageReason> {
            calls.rebuilt.add(1, ordering: .relaxed)
            var cursor = ByteCursor(form)
            guard let headLength = cursor.readVarint(), headLength <= UInt64(cursor.remaining) else {
                return .failure(DamageReason("a masked form whose head is cut short"))
            }
            var raw = Array(form[cursor.position..<cursor.position + Int(headLength)])
            cursor.position += Int(headLength)
            var payloads: [[UInt8]] = []
            for _ in 0..<count {
                guard let length = cursor.readVarint(), length <= UInt64(cursor.remaining) else {
                    return .failure(DamageReason("a masked form that ends inside a payload"))
                }
                payloads.append(form[cursor.position..<cursor.position + Int(length)].map { $0 ^ 0xA5 })
                cursor.position += Int(length)
            }
            for payload in payloads { raw.appendVarint(UInt64(payload.count)) }
            for payload in payloads { raw += payload }
            guard cursor.remaining == 0, raw.count == rawLength else {
                return .failure(DamageReason("a masked form of \(raw.count) bytes, not \(rawLength)"))
            }
            return .success(raw)
        }

        struct Encoder: BlockPayloadEncoder {
            let calls: Calls
            let hasForm: Bool
            var payloads: [ArraySlice<UInt8>] = []

            mutating func reset() { payloads.removeAll(keepingCapacity: true) }
            mutating func add(_ payload: ArraySlice<UInt8>) { payloads.append(payload) }

            func finish(head: [UInt8], into form: inout [UInt8], scratch: inout [UInt8]) -> Bool {
                calls.encoded.add(1, ordering: .relaxed)
                guard hasForm else { return false }
                form.removeAll(keepingCapacity: true)
                form.appendVarint(UInt64(head.count))
                form += head
                for payload in payloads {
                    form.appendVarint(UInt64(payload.count))
                    form += payload.map { $0 ^ 0xA5 }
                }
                return true
            }
        }
    }

    /// The codec byte of each block of the block file at `path` (FORMAT.md, "Block": byte 5).
    static func codecs(ofBlockFile path: String) throws -> [UInt8] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var codecs: [UInt8] = []
        var position = LogFormat.blockFileHeaderSize
        while position < bytes.count {
            let header = try bytes.withUnsafeBytes { try BlockHeader.decode(UnsafeRawBufferPointer(rebasing: $0[position...])).get() }
            codecs.append(bytes[position + 5])
            position += header.totalSize
        }
        return codecs
    }

    static func writeCompacted(with codec: MaskingCodec, in folder: TemporaryFolder) throws -> [(time: Int64, payload: [UInt8])] {
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock, segmentSize: 16 << 10)
        configuration.blockSize = 8 << 10
        configuration.payloadCodec = codec
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 200)
        try log.compact()
        try log.close()
        return appended
    }

    @Test func aPluggedCodecWritesCodec2BlocksThatReadBackWithIt() throws {
        let folder = TemporaryFolder.made("plain-codec")
        let codec = MaskingCodec()
        let appended = try Self.writeCompacted(with: codec, in: folder)
        let blockFile = folder.sub(String(format: "%020d.blk", 1))
        let codecs = try Self.codecs(ofBlockFile: blockFile)
        #expect(codecs.count > 1 && codecs.allSatisfy { $0 == LogFormat.Codec.fieldColumns.rawValue }, "\(codecs)")
        #expect(codec.calls.encoded.load(ordering: .relaxed) >= codecs.count)

        let reader = try LogReader(directory: folder.path, payloadCodec: codec)
        let cursor = try reader.events(from: 1)
        var read: [LogEvent] = []
        while let event = try cursor.next() { read.append(event) }
        #expect(read.map { Array($0.payload) } == appended.map(\.payload))
        #expect(codec.calls.rebuilt.load(ordering: .relaxed) >= codecs.count)
        let verified = try LogVerifier.verify(directory: folder.path, payloadCodec: codec)
        #expect(verified.isClean && verified.lastSequence == UInt64(appended.count), "\(verified.problems)")

        // Erasure rewrites blocks through the same codec, and every head stays.
        let headBefore = try reader.head(at: UInt64(appended.count))
        var configuration = Format2LogTests.format2(segmentSize: 16 << 10)
        configuration.payloadCodec = codec
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        try log.erase([7: [1, 2]])
        try log.close()
        let erased = try LogReader(directory: folder.path, payloadCodec: codec)
        #expect(try erased.head(at: UInt64(appended.count)) == headBefore)
        #expect(try LogVerifier.verify(directory: folder.path, payloadCodec: codec).isClean)
    }

    /// A codec-2 block read without the codec it was written with is an error that says so,
    /// and verify reports it rather than passing it over.
    @Test func aReaderWithoutTheCodecSaysWhatItLacks() throws {
        let folder = TemporaryFolder.made("plain-codec-missing")
        _ = try Self.writeCompacted(with: MaskingCodec(), in: folder)
        let cursor = try LogReader(directory: folder.path).events(from: 1)
        #expect {
            while try cursor.next() != nil {}
        } throws: { error in
            (error as? LogError)?.message.contains("without the payload codec it was written with") == true
        }
        let verified = try LogVerifier.verify(directory: folder.path)
        #expect(!verified.isClean)
    }

    /// A codec may decline a block (its payloads have no form): the block is then stored with
    /// zstd alone (codec 1), and a reader without any codec reads it.
    @Test func aBlockTheCodecDeclinesIsStoredWithZstdAlone() throws {
        let folder = TemporaryFolder.made("plain-codec-declines")
        var declining = MaskingCodec()
        declining.hasForm = false
        let appended = try Self.writeCompacted(with: declining, in: folder)
        let codecs = try Self.codecs(ofBlockFile: folder.sub(String(format: "%020d.blk", 1)))
        #expect(!codecs.isEmpty && codecs.allSatisfy { $0 == LogFormat.Codec.zstd.rawValue }, "\(codecs)")
        #expect(declining.calls.encoded.load(ordering: .relaxed) >= codecs.count)
        #expect(try readAll(folder.path).map { Array($0.payload) } == appended.map(\.payload))
    }
}
