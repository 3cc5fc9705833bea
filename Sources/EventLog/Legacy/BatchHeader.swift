/// The 84-byte header in front of every batch (FORMAT.md, "Batch header (84 bytes)").
struct BatchHeader: Equatable {
    var codec: LegacyFormat.Codec
    var firstSequence: UInt64
    var eventCount: UInt32
    var storedLength: UInt32
    var rawLength: UInt32
    var firstTimestamp: LogTimestamp
    var lastTimestamp: LogTimestamp
    var previousHash: ChainHash
    var batchCRC: UInt32

    var lastSequence: UInt64 { firstSequence + UInt64(eventCount) - 1 }
    /// Header and stored payload: the batch's size on disk.
    var totalSize: Int { LegacyFormat.batchHeaderSize + Int(storedLength) }

    /// Why 84 bytes are not a usable batch header.
    enum Problem: Error, Equatable, CustomStringConvertible {
        /// All 84 bytes are zero: the end of data, not damage (FORMAT.md, "Zero tail").
        case zero
        case badMagic
        case badChecksum
        /// The checksum holds but the version is newer than this code.
        case unsupportedVersion(UInt8)
        /// The checksum holds but a field breaks a rule: written by a broken or foreign writer.
        case invalidField(String)

        var description: String {
            switch self {
            case .zero: "zero bytes"
            case .badMagic: "no batch header (the bytes are not VTLB)"
            case .badChecksum: "a batch header that fails its checksum"
            case .unsupportedVersion(let version): "a batch of format version \(version)"
            case .invalidField(let what): "a batch header with \(what)"
            }
        }
    }

    /// Reads and checks the header at the start of `bytes` (at least 84 of them).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<BatchHeader, Problem> {
        precondition(bytes.count >= LegacyFormat.batchHeaderSize)
        let header = UnsafeRawBufferPointer(rebasing: bytes[0..<LegacyFormat.batchHeaderSize])
        guard header[0..<4].elementsEqual(LegacyFormat.batchMagic) else {
            return .failure(header.allSatisfy { $0 == 0 } ? .zero : .badMagic)
        }
        let storedCRC = UInt32(littleEndianBytes: header, at: LegacyFormat.batchHeaderCRCOffset)
        guard storedCRC == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[0..<LegacyFormat.batchHeaderCRCOffset])) else {
            return .failure(.badChecksum)
        }
        guard header[4] == LegacyFormat.batchVersion else { return .failure(.unsupportedVersion(header[4])) }
        guard let codec = LegacyFormat.Codec(rawValue: header[5]) else {
            return .failure(.invalidField("an unknown codec \(header[5])"))
        }
        guard header[6] == 0, header[7] == 0 else { return .failure(.invalidField("reserved bytes that are not zero")) }
        let result = BatchHeader(
            codec: codec,
            firstSequence: UInt64(littleEndianBytes: header, at: LegacyFormat.batchFirstSequenceOffset),
            eventCount: UInt32(littleEndianBytes: header, at: LegacyFormat.batchEventCountOffset),
            storedLength: UInt32(littleEndianBytes: header, at: LegacyFormat.batchStoredLengthOffset),
            rawLength: UInt32(littleEndianBytes: header, at: LegacyFormat.batchRawLengthOffset),
            firstTimestamp: LogTimestamp(
                microsecondsSinceEpoch: Int64(littleEndianBytes: header, at: LegacyFormat.batchFirstTimestampOffset)),
            lastTimestamp: LogTimestamp(
                microsecondsSinceEpoch: Int64(littleEndianBytes: header, at: LegacyFormat.batchLastTimestampOffset)),
            previousHash: ChainHash(bytes: Array(header[LegacyFormat.batchPreviousHashOffset..<LegacyFormat.batchCRCOffset])),
            batchCRC: UInt32(littleEndianBytes: header, at: LegacyFormat.batchCRCOffset)
        )
        if let problem = result.fieldProblem { return .failure(.invalidField(problem)) }
        return .success(result)
    }

    /// The first rule of the format that the fields break, if any.
    private var fieldProblem: String? {
        if firstSequence == 0 { return "sequence 0" }
        if eventCount == 0 { return "no events" }
        if firstSequence > UInt64.max - UInt64(eventCount) { return "sequence numbers past 2^64" }
        if rawLength > LegacyFormat.maxRawLength { return "a raw length of \(rawLength) bytes, over the 64 MiB limit" }
        if codec == .raw, storedLength != rawLength { return "a raw payload whose stored and raw lengths differ" }
        if lastTimestamp < firstTimestamp { return "a last timestamp before its first" }
        return nil
    }

    /// The batch CRC of this header's first 76 bytes followed by `payload`.
    static func batchChecksum(header: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(UnsafeRawBufferPointer(rebasing: header[0..<LegacyFormat.batchCRCOffset]))
        crc.update(payload)
        return crc.value
    }
}
