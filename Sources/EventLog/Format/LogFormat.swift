/// Every constant of on-disk format 2, the format every new log is written in.
///
/// The definition is `docs/FORMAT.md`, part "Format 2"; each constant names the section it comes
/// from. Format 1's are in ``LegacyFormat``, the ones both share in ``LogFiles``. Change nothing here without changing that
/// document.
public enum LogFormat {
    // MARK: Segment header — FORMAT.md, "Segment header (136 bytes)"

    static let segmentVersion: UInt16 = 2
    static let segmentHeaderSize = 136
    static let segmentTimeBeforeOffset = 48
    static let segmentChainBeforeOffset = 56
    static let segmentOriginSequenceOffset = 88
    static let segmentOriginHashOffset = 96
    static let segmentHeaderCRCOffset = 132

    // MARK: Hot-tail record — FORMAT.md, "Hot-tail record: one commit"

    /// A record's `head` varint takes at most 4 bytes (64 MiB × 2 + 1 < 2^28).
    static let maxRecordHeadLength = 4
    /// `head` is `stored_length × 2 + codec`; a raw event takes at least two bytes.
    static let minRecordStoredLength = 2
    static let recordCRCSize = 4

    /// The time that the log's first event counts from: −2^63 (FORMAT.md, "Segment header").
    public static let timeBeforeFirstEvent = Int64.min

    // MARK: Block file — FORMAT.md, "Block file (.blk)"

    /// ASCII `VTLOGBLK`.
    static let blockFileMagic: [UInt8] = Array("VTLOGBLK".utf8)
    static let blockFileVersion: UInt16 = 2
    static let blockFileHeaderSize = 120
    static let blockFileHeaderCRCOffset = 116

    /// ASCII `VTBK`.
    static let blockMagic: [UInt8] = Array("VTBK".utf8)
    static let blockVersion: UInt8 = 2
    static let blockHeaderSize = 116
    static let blockFirstSequenceOffset = 8
    static let blockEventCountOffset = 16
    static let blockStoredLengthOffset = 20
    static let blockRawLengthOffset = 24
    static let blockTimeBeforeOffset = 28
    static let blockLastTimeOffset = 36
    static let blockChainBeforeOffset = 44
    static let blockChainAfterOffset = 76
    static let blockPayloadCRCOffset = 108
    static let blockHeaderCRCOffset = 112
    /// `flags` bit 0: the raw payload starts with the erasure list.
    static let blockFlagErased: UInt8 = 0x01

    /// The largest raw (decompressed) size of a record or a block: 64 MiB.
    static let maxRawLength = 64 << 20
    static let blockExtension = ".blk"

    /// FORMAT.md, "Block": how the payload is stored.
    public enum Codec: UInt8, Sendable {
        case raw = 0
        case zstd = 1
        /// The payloads taken apart into field columns, then one zstd frame (FORMAT.md,
        /// "Codec 2: field columns"); columns layout only.
        case fieldColumns = 2
    }

    /// FORMAT.md, "Block": the order of the raw events.
    public enum Layout: UInt8, Sendable, CaseIterable {
        /// `time_delta, length, payload` per event.
        case rows = 0
        /// All time deltas, then all lengths, then all payloads.
        case columns = 1
    }

    // MARK: Sparse index — FORMAT.md, "Sparse index (version 2)"

    static let indexVersion: UInt16 = 2
    static let indexHeaderSize = 44

    // MARK: Event chain — FORMAT.md, "The event chain"

    static let leafTag: UInt8 = 0x00
    static let stepTag: UInt8 = 0x01
    static let anchorTag: UInt8 = 0x02
    /// ASCII `VTLOG2`, in the anchor.
    static let anchorLabel: [UInt8] = Array("VTLOG2".utf8)
    /// An erased event keeps this many bytes: its payload's SHA-256.
    public static let digestSize = 32
    /// …followed by at most this many bytes the layer above chose to keep (FORMAT.md, "Erased events").
    public static let maxErasedKept = 16
    static let erasedLengths = UInt64(digestSize)...UInt64(digestSize + maxErasedKept)
}
