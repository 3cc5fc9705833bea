/// Every constant of on-disk format 1, which this version reads and upgrades (FORMAT.md, part
/// "Format 1"); the constants both formats share are in ``LogFiles``, format 2's in
/// ``LogFormat``. Change nothing here without changing that document.
enum LegacyFormat {
    // MARK: Segment header — FORMAT.md, "Segment header (64 bytes)"

    // The magic and the first sequence's place are both formats' (``LogFiles``).
    static let segmentVersion: UInt16 = 1
    static let segmentHeaderSize = 64
    static let segmentLogIDOffset = 24
    static let segmentCreatedAtOffset = 40
    static let segmentHeaderCRCOffset = 60

    // MARK: Batch header — FORMAT.md, "Batch header (84 bytes)"

    /// ASCII `VTLB`.
    static let batchMagic: [UInt8] = Array("VTLB".utf8)
    static let batchVersion: UInt8 = 1
    static let batchHeaderSize = 84
    static let batchFirstSequenceOffset = 8
    static let batchEventCountOffset = 16
    static let batchStoredLengthOffset = 20
    static let batchRawLengthOffset = 24
    static let batchFirstTimestampOffset = 28
    static let batchLastTimestampOffset = 36
    static let batchPreviousHashOffset = 44
    static let batchCRCOffset = 76
    static let batchHeaderCRCOffset = 80
    /// The largest decompressed payload a batch may declare (64 MiB).
    static let maxRawLength = 64 << 20

    /// FORMAT.md, "Batch header": the `codec` byte.
    enum Codec: UInt8 {
        case raw = 0
        case zstd = 1
    }

    // MARK: Sparse index — FORMAT.md, "Sparse index file (.idx)"

    /// ASCII `VTLOGIDX`.
    static let indexMagic: [UInt8] = Array("VTLOGIDX".utf8)
    static let indexVersion: UInt16 = 1
    static let indexHeaderSize = 24
    static let indexEntrySize = 28
}
