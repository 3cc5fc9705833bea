import EventLog
import FileIO
import Foundation
import SwiftProtobuf

/// The bytes of a `.snap` file (docs/FORMAT.md, "Snapshot file"): a 96-byte header, then a
/// `StateSnapshot` message, zstd-compressed.
enum SnapshotFile {
    static let magic = Array("VTSNAPSH".utf8)
    /// Written: 5 (2 packed the slots' photos; 3 added each pin's removed photos and each
    /// album's requesting device; 4 the pins forgotten; 5 what each device said it had seen,
    /// docs/FORMAT.md). Read: 4 and 5 (no program that wrote 4 folded a `DeviceSeen`, so it has
    /// none to lack). Snapshots of older versions lack state a fold now keeps, so they are
    /// skipped and the log replayed instead, once; a reader from before version 5 skips these
    /// snapshots by their version in the same way.
    static let version: UInt16 = 5
    static let readableVersions: ClosedRange<UInt16> = 4...5
    static let headerSize = 96
    static let maxRawLength: UInt64 = 1 << 30
    static let fileExtension = ".snap"

    /// A snapshot's header, read and checked.
    struct Header: Equatable {
        var sequence: UInt64
        var batchHash: [UInt8]
        var codec: UInt8
        var rawLength: UInt64
        var storedLength: UInt64
        var payloadCRC: UInt32
    }

    /// The file's bytes: the payload compressed with `compressor` when that makes it smaller,
    /// stored raw (codec 0) when it does not or when `compressor` is nil.
    /// The payload is written by ``SnapshotWireEncoder``, the same bytes swift-protobuf writes
    /// for `SnapshotCodec.message(for:)`; raw, straight after the room left for the header.
    static func encode(_ state: TouristState, head: LogHead, compressor: ZstdCompressor?) throws -> [UInt8] {
        precondition(head.sequence == state.sequence, "a snapshot's head must be at its state's sequence")
        guard let compressor else {
            return SnapshotWireEncoder.encode(state, prefix: headerSize) { payload, room in
                let header = self.header(state, head, codec: 0, rawLength: payload.count, stored: payload)
                room.copyBytes(from: header)
            }
        }
        let raw = SnapshotWireEncoder.encode(state)
        var stored: [UInt8] = []
        let compressed = raw.withUnsafeBytes { compressor.compress($0, appendingTo: &stored) }
        if compressed == nil || stored.count >= raw.count { stored = raw }
        let codec: UInt8 = stored.count < raw.count ? 1 : 0
        return stored.withUnsafeBytes { header(state, head, codec: codec, rawLength: raw.count, stored: $0) } + stored
    }

    private static func header(_ state: TouristState, _ head: LogHead, codec: UInt8, rawLength: Int, stored: UnsafeRawBufferPointer) -> [UInt8] {
        var bytes = magic
        append(version, to: &bytes)
        bytes.append(codec)
        bytes.append(contentsOf: repeatElement(0, count: 5))
        append(state.sequence, to: &bytes)
        bytes.append(contentsOf: head.hash.bytes)
        append(UInt64(rawLength), to: &bytes)
        append(UInt64(stored.count), to: &bytes)
        bytes.append(contentsOf: repeatElement(0, count: 16))
        append(CRC32C.checksum(stored), to: &bytes)
        append(CRC32C.checksum(bytes), to: &bytes)
        assert(bytes.count == headerSize)
        return bytes
    }

    static func decodeHeader(_ bytes: [UInt8]) throws(SnapshotProblem) -> Header {
        guard bytes.count >= headerSize else { throw SnapshotProblem("it is shorter than a snapshot header") }
        guard Array(bytes[0..<8]) == magic else { throw SnapshotProblem("it does not start with VTSNAPSH") }
        guard integer(bytes, 92, as: UInt32.self) == CRC32C.checksum(bytes[0..<92]) else {
            throw SnapshotProblem("its header fails its checksum")
        }
        let version = integer(bytes, 8, as: UInt16.self)
        if version < readableVersions.lowerBound {
            throw SnapshotProblem(
                "it has snapshot format version \(version), older than this version reads (\(readableVersions.lowerBound))", isOutdated: true)
        }
        guard readableVersions.contains(version) else { throw SnapshotProblem("it has snapshot format version \(version)") }
        guard bytes[11..<16].allSatisfy({ $0 == 0 }), bytes[72..<88].allSatisfy({ $0 == 0 }), bytes[10] <= 1 else {
            throw SnapshotProblem("its header has reserved bytes set or an unknown codec")
        }
        let header = Header(
            sequence: integer(bytes, 16, as: UInt64.self), batchHash: Array(bytes[24..<56]), codec: bytes[10],
            rawLength: integer(bytes, 56, as: UInt64.self), storedLength: integer(bytes, 64, as: UInt64.self),
            payloadCRC: integer(bytes, 88, as: UInt32.self))
        guard header.rawLength <= maxRawLength, header.codec == 1 || header.storedLength == header.rawLength else {
            throw SnapshotProblem("its lengths are impossible")
        }
        return header
    }

    /// Checks and decodes a whole file. With `pinsOnly`, the state's pins keep their ids, places
    /// and drops but every album is left empty (and the photo references with them): the
    /// file is checked as fully, but the albums' photos, nearly all of a load, are not decoded.
    /// For questions about which pins exist, which the fold answers without albums.
    static func decode(
        _ bytes: [UInt8], decompressor: ZstdDecompressor, pinsOnly: Bool = false
    ) throws(SnapshotProblem) -> (Header, TouristState) {
        try bytes.withUnsafeBytes { bytes in
            Result { () throws(SnapshotProblem) in try decode(bytes, decompressor: decompressor, pinsOnly: pinsOnly) }
        }.get()
    }

    /// The same, from the file's bytes where they lie (a mapped file's: ``SnapshotFolder``).
    static func decode(
        _ bytes: UnsafeRawBufferPointer, decompressor: ZstdDecompressor, pinsOnly: Bool = false
    ) throws(SnapshotProblem) -> (Header, TouristState) {
        let header = try decodeHeader(Array(bytes.prefix(headerSize)))
        guard UInt64(bytes.count - headerSize) == header.storedLength else {
            throw SnapshotProblem("it holds \(bytes.count - headerSize) payload bytes, not \(header.storedLength)")
        }
        let stored = UnsafeRawBufferPointer(rebasing: bytes[headerSize...])
        guard CRC32C.checksum(stored) == header.payloadCRC else { throw SnapshotProblem("its payload fails its checksum") }
        // A raw payload is decoded where it lies in the file's bytes: copying 20 MB first cost
        // a pass over fresh memory (docs/BENCHMARKS.md).
        guard header.codec == 1 else { return try decode(raw: stored, header: header, pinsOnly: pinsOnly) }
        guard let output = decompressor.decompress(stored, rawLength: Int(header.rawLength)) else {
            throw SnapshotProblem("its payload does not decompress")
        }
        return try output.withUnsafeBytes { raw in
            Result { () throws(SnapshotProblem) in try decode(raw: raw, header: header, pinsOnly: pinsOnly) }
        }.get()
    }

    private static func decode(
        raw: UnsafeRawBufferPointer, header: Header, pinsOnly: Bool
    ) throws(SnapshotProblem) -> (Header, TouristState) {
        if let state = SnapshotWireDecoder.state(raw, pinsOnly: pinsOnly) {
            guard state.sequence == header.sequence else {
                throw SnapshotProblem("its payload is for sequence \(state.sequence), its header for \(header.sequence)")
            }
            return (header, state)
        }
        var state = try decodeGenerally(Array(raw), header: header)
        if pinsOnly { state.emptyAlbums() }
        return (header, state)
    }

    /// The general path: swift-protobuf's full decoding, then ``SnapshotCodec``.
    static func decodeGenerally(_ raw: [UInt8], header: Header) throws(SnapshotProblem) -> TouristState {
        let message: VirtualTourist_V1_StateSnapshot
        do {
            message = try VirtualTourist_V1_StateSnapshot(serializedBytes: raw)
        } catch {
            throw SnapshotProblem("its payload is not a state snapshot (\(error))")
        }
        guard message.sequence == header.sequence else {
            throw SnapshotProblem("its payload is for sequence \(message.sequence), its header for \(header.sequence)")
        }
        return try SnapshotCodec.state(from: message)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func integer<T: FixedWidthInteger>(_ bytes: [UInt8], _ offset: Int, as: T.Type) -> T {
        bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    static func name(for sequence: UInt64) -> String {
        NumberedFileName.make(sequence, extension: fileExtension)
    }

    static func sequence(in name: String) -> UInt64? {
        NumberedFileName.number(in: name, extension: fileExtension)
    }
}
