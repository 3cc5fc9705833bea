/// Every constant of the on-disk format, in one place.
///
/// The definition is `docs/FORMAT.md`; each constant names the section it comes from. Change
/// nothing here without changing that document and bumping the version it describes.
enum LogFormat {
    // MARK: Segment header — FORMAT.md, "Segment header (64 bytes)"

    /// ASCII `VTLOGSEG`.
    static let segmentMagic: [UInt8] = Array("VTLOGSEG".utf8)
    static let segmentVersion: UInt16 = 1
    static let segmentHeaderSize = 64
    static let segmentFirstSequenceOffset = 16
    static let segmentLogIDOffset = 24
    static let segmentLogIDSize = 16
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

    // MARK: Directory — FORMAT.md, "The directory"

    static let segmentExtension = ".seg"
    static let indexExtension = ".idx"
    static let temporaryExtension = ".tmp"
    static let lockFileName = "LOCK"
    static let quarantineDirectoryName = "quarantine"
    /// Segment and index names are the first sequence in 20 decimal digits
    /// (``FileIO/NumberedFileName``).

    // MARK: Varint — FORMAT.md, "Conventions"

    static let maxVarintLength = 10
}
