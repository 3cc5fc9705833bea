@testable import EventLog

extension BatchHeader {
    /// Builds the header bytes for a payload, computing both checksums.
    static func encode(
        codec: LegacyFormat.Codec, firstSequence: UInt64, eventCount: UInt32, rawLength: UInt32,
        firstTimestamp: LogTimestamp, lastTimestamp: LogTimestamp, previousHash: ChainHash,
        payload: UnsafeRawBufferPointer, into bytes: inout [UInt8]
    ) {
        let start = bytes.count
        bytes.append(contentsOf: LegacyFormat.batchMagic)
        bytes.append(LegacyFormat.batchVersion)
        bytes.append(codec.rawValue)
        bytes.appendLittleEndian(UInt16(0))
        bytes.appendLittleEndian(firstSequence)
        bytes.appendLittleEndian(eventCount)
        bytes.appendLittleEndian(UInt32(payload.count))
        bytes.appendLittleEndian(rawLength)
        bytes.appendLittleEndian(firstTimestamp.microsecondsSinceEpoch)
        bytes.appendLittleEndian(lastTimestamp.microsecondsSinceEpoch)
        bytes.append(contentsOf: previousHash.bytes)
        var crc = CRC32C()
        crc.update(bytes[start...])
        crc.update(payload)
        bytes.appendLittleEndian(crc.value)
        bytes.appendLittleEndian(CRC32C.checksum(bytes[start...]))
    }
}
