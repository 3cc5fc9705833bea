@testable import EventLog

extension SegmentHeader {
    /// The header's bytes, checksum included.
    func encoded() -> [UInt8] {
        var bytes = LogFiles.segmentMagic
        bytes.appendLittleEndian(LegacyFormat.segmentVersion)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.append(contentsOf: logID)
        bytes.appendLittleEndian(createdAt.microsecondsSinceEpoch)
        bytes.append(contentsOf: repeatElement(0, count: 12))
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == LegacyFormat.segmentHeaderSize)
        return bytes
    }
}
