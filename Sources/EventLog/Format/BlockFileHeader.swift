import FileIO

/// The 120-byte header of a block file (FORMAT.md, "File header (120 bytes)").
struct BlockFileHeader: Equatable {
    var firstSequence: UInt64
    var eventCount: UInt64
    var logID: [UInt8]
    var origin: LogOrigin
    var createdAt: LogTimestamp
    var blockCount: UInt32

    var lastSequence: UInt64 { firstSequence + eventCount - 1 }

    func encoded() -> [UInt8] {
        var bytes = LogFormat.blockFileMagic
        bytes.appendLittleEndian(LogFormat.blockFileVersion)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.appendLittleEndian(eventCount)
        bytes.append(contentsOf: logID)
        origin.append(to: &bytes)
        bytes.appendLittleEndian(createdAt.microsecondsSinceEpoch)
        bytes.appendLittleEndian(blockCount)
        bytes.append(contentsOf: repeatElement(0, count: 16))
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == LogFormat.blockFileHeaderSize)
        return bytes
    }

    static func decode(_ bytes: [UInt8], file: String) throws -> BlockFileHeader {
        func corrupt(_ what: String, at offset: Int64 = 0) -> LogError {
            LogError(.corrupt, "the log is damaged: \(file) \(what)", file: file, offset: offset)
        }
        guard bytes.count >= LogFormat.blockFileHeaderSize else { throw corrupt("is shorter than a block file header") }
        guard Array(bytes[0..<8]) == LogFormat.blockFileMagic else {
            throw LogError(.notALog, "\(file) is not a block file of an event log: its first bytes are not VTLOGBLK", file: file, offset: 0)
        }
        let crcOffset = LogFormat.blockFileHeaderCRCOffset
        guard bytes.getLittleEndian(UInt32.self, at: crcOffset) == CRC32C.checksum(bytes[0..<crcOffset]) else {
            throw corrupt("has a header that fails its checksum")
        }
        let version = bytes.getLittleEndian(UInt16.self, at: 8)
        guard version == LogFormat.blockFileVersion else {
            throw LogError(
                .unsupportedVersion, "\(file) has block file version \(version); this program reads version 2",
                file: file, offset: 8)
        }
        guard bytes[10..<16].allSatisfy({ $0 == 0 }), bytes[100..<116].allSatisfy({ $0 == 0 }) else {
            throw corrupt("has reserved header bytes that are not zero")
        }
        let header = BlockFileHeader(
            firstSequence: bytes.getLittleEndian(UInt64.self, at: 16),
            eventCount: bytes.getLittleEndian(UInt64.self, at: 24),
            logID: Array(bytes[32..<48]),
            origin: try LogOrigin(bytes, at: 48, file: file),
            createdAt: LogTimestamp(microsecondsSinceEpoch: bytes.getLittleEndian(Int64.self, at: 88)),
            blockCount: bytes.getLittleEndian(UInt32.self, at: 96))
        guard header.firstSequence >= 1, header.eventCount >= 1, header.blockCount >= 1,
            header.firstSequence <= UInt64.max - header.eventCount
        else { throw corrupt("has a header stating no events, no blocks or sequences past 2^64") }
        return header
    }
}
