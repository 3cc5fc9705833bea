import FileIO

/// The 136-byte header of a format-2 hot-tail segment (FORMAT.md, "Segment header (136 bytes)").
struct TailSegmentHeader: Equatable {
    var firstSequence: UInt64
    var logID: [UInt8]
    var createdAt: LogTimestamp
    /// The time of event `firstSequence − 1` (−2^63 for the log's first segment).
    var timeBefore: Int64
    /// The chain's head after event `firstSequence − 1`.
    var chainBefore: ChainHash
    var origin: LogOrigin

    func encoded() -> [UInt8] {
        var bytes = LogFiles.segmentMagic
        bytes.appendLittleEndian(LogFormat.segmentVersion)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.append(contentsOf: logID)
        bytes.appendLittleEndian(createdAt.microsecondsSinceEpoch)
        bytes.appendLittleEndian(timeBefore)
        bytes.append(contentsOf: chainBefore.bytes)
        origin.append(to: &bytes)
        bytes.append(contentsOf: repeatElement(0, count: 4))
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == LogFormat.segmentHeaderSize)
        return bytes
    }

    /// Reads and checks a header whose first 10 bytes said version 2. `file` names it in errors.
    static func decode(_ bytes: [UInt8], file: String) throws -> TailSegmentHeader {
        guard bytes.count >= LogFormat.segmentHeaderSize else {
            throw LogError(
                .corrupt, "the log is damaged: \(file) is \(bytes.count) bytes long, shorter than its header",
                file: file, offset: 0)
        }
        let crcOffset = LogFormat.segmentHeaderCRCOffset
        guard bytes.getLittleEndian(UInt32.self, at: crcOffset) == CRC32C.checksum(bytes[0..<crcOffset]) else {
            throw LogError(.corrupt, "the log is damaged: the header of \(file) fails its checksum", file: file, offset: 0)
        }
        guard bytes[10..<16].allSatisfy({ $0 == 0 }), bytes[128..<132].allSatisfy({ $0 == 0 }) else {
            throw LogError(.corrupt, "the log is damaged: reserved bytes of \(file)'s header are not zero", file: file, offset: 0)
        }
        let chain = LogFormat.segmentChainBeforeOffset
        return TailSegmentHeader(
            firstSequence: bytes.getLittleEndian(UInt64.self, at: LogFiles.segmentFirstSequenceOffset),
            logID: Array(bytes[24..<40]),
            createdAt: LogTimestamp(microsecondsSinceEpoch: bytes.getLittleEndian(Int64.self, at: 40)),
            timeBefore: bytes.getLittleEndian(Int64.self, at: LogFormat.segmentTimeBeforeOffset),
            chainBefore: ChainHash(bytes: Array(bytes[chain..<chain + 32])),
            origin: try LogOrigin(bytes, at: LogFormat.segmentOriginSequenceOffset, file: file))
    }
}
