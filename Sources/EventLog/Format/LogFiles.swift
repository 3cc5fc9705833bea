/// The constants both on-disk formats share (FORMAT.md, "The directory" and "Conventions"):
/// the names in a log's directory and the sizes every file uses. Format 2's own are in
/// ``LogFormat``, format 1's in ``LegacyFormat``.
enum LogFiles {
    // MARK: Directory — FORMAT.md, "The directory"

    static let segmentExtension = ".seg"
    static let indexExtension = ".idx"
    static let temporaryExtension = ".tmp"
    static let lockFileName = "LOCK"
    static let quarantineDirectoryName = "quarantine"
    /// Segment and index names are the first sequence in 20 decimal digits
    /// (``FileIO/NumberedFileName``).

    // MARK: Segment header — both formats' start the same (FORMAT.md, "Which format a directory holds")

    /// ASCII `VTLOGSEG`.
    static let segmentMagic: [UInt8] = Array("VTLOGSEG".utf8)
    static let segmentFirstSequenceOffset = 16

    // MARK: Sizes — FORMAT.md, "Conventions"

    /// A log id, in every segment's and block file's header.
    static let logIDSize = 16
    static let maxVarintLength = 10
}
