import FileIO

/// The data files of a format-2 log directory (FORMAT.md, part "Format 2", "The directory").
struct LogListing {
    /// First sequences of the block files and of the segments, ascending.
    var blockFiles: [UInt64] = []
    var segments: [UInt64] = []
    var indexes: Set<UInt64> = []
    /// First sequences of the key summaries (FORMAT.md, "Key summaries").
    var keySummaries: [UInt64] = []
    /// First sequences of the tail checkpoints (FORMAT.md, "Tail checkpoint").
    var tailCheckpoints: [UInt64] = []
    var temporaries: [String] = []
    var foreign: [String] = []

    static func list(_ directory: String, _ fileSystem: any FileSystem) throws -> LogListing {
        of(try io("list the log directory \(directory)", { try fileSystem.listDirectory(directory) }))
    }

    /// The listing of a directory holding these names.
    static func of(_ names: [String]) -> LogListing {
        var listing = LogListing()
        for name in names {
            if let sequence = SegmentFiles.sequence(in: name, LogFormat.blockExtension) {
                listing.blockFiles.append(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, LogFiles.segmentExtension) {
                listing.segments.append(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, LogFiles.indexExtension) {
                listing.indexes.insert(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, KeySummary.fileExtension) {
                listing.keySummaries.append(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, TailCheckpoint.fileExtension) {
                listing.tailCheckpoints.append(sequence)
            } else if name.hasSuffix(LogFiles.temporaryExtension) {
                listing.temporaries.append(name)
            } else if name != LogFiles.lockFileName && name != LogFiles.quarantineDirectoryName {
                listing.foreign.append(name)
            }
        }
        listing.blockFiles.sort()
        listing.segments.sort()
        return listing
    }

    var isEmpty: Bool { blockFiles.isEmpty && segments.isEmpty }
}

extension SegmentFiles {
    static func blockFilePath(_ directory: String, _ firstSequence: UInt64) -> String {
        Path.join(directory, name(firstSequence, LogFormat.blockExtension))
    }
}
