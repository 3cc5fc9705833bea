/// The 64 bytes at the start of every segment (FORMAT.md, "Segment header (64 bytes)").
struct SegmentHeader: Equatable {
    var firstSequence: UInt64
    /// 16 random bytes naming the log; the same in each of its segments.
    var logID: [UInt8]
    var createdAt: LogTimestamp

    /// Reads and checks a header. `file` is only for the error message.
    static func decode(_ bytes: [UInt8], file: String) throws -> SegmentHeader {
        func fail(_ what: String) -> LogError {
            LogError(.notALog, "\(file) is not a segment of an event log: \(what)", file: file, offset: 0)
        }
        guard bytes.count >= LegacyFormat.segmentHeaderSize else {
            throw fail("it is \(bytes.count) bytes long, shorter than a segment header")
        }
        guard Array(bytes[0..<8]) == LogFiles.segmentMagic else { throw fail("its first bytes are not VTLOGSEG") }
        let stored = bytes.getLittleEndian(UInt32.self, at: LegacyFormat.segmentHeaderCRCOffset)
        let actual = CRC32C.checksum(bytes[0..<LegacyFormat.segmentHeaderCRCOffset])
        guard stored == actual else {
            throw LogError(
                .corrupt, "the log is damaged: the header of \(file) fails its checksum", file: file, offset: 0)
        }
        let version = bytes.getLittleEndian(UInt16.self, at: 8)
        guard version == LegacyFormat.segmentVersion else {
            throw LogError(
                .unsupportedVersion,
                "\(file) has segment format version \(version); this program reads version \(LegacyFormat.segmentVersion)",
                file: file, offset: 8)
        }
        guard bytes[10..<16].allSatisfy({ $0 == 0 }), bytes[48..<60].allSatisfy({ $0 == 0 }) else {
            throw fail("reserved header bytes are not zero")
        }
        let idStart = LegacyFormat.segmentLogIDOffset
        return SegmentHeader(
            firstSequence: bytes.getLittleEndian(UInt64.self, at: LogFiles.segmentFirstSequenceOffset),
            logID: Array(bytes[idStart..<idStart + LogFiles.logIDSize]),
            createdAt: LogTimestamp(
                microsecondsSinceEpoch: bytes.getLittleEndian(Int64.self, at: LegacyFormat.segmentCreatedAtOffset))
        )
    }
}
