import FileIO

/// Names of the files in a log directory (FORMAT.md, "The directory").
enum SegmentFiles {
    /// `00000000000000000001.seg` for sequence 1.
    static func name(_ firstSequence: UInt64, _ fileExtension: String) -> String {
        NumberedFileName.make(firstSequence, extension: fileExtension)
    }

    static func segmentPath(_ directory: String, _ firstSequence: UInt64) -> String {
        Path.join(directory, name(firstSequence, LogFiles.segmentExtension))
    }

    static func indexPath(_ directory: String, _ firstSequence: UInt64) -> String {
        Path.join(directory, name(firstSequence, LogFiles.indexExtension))
    }

    /// The sequence number in a segment or index name, or nil when the name is not one.
    static func sequence(in name: String, _ fileExtension: String) -> UInt64? {
        guard let value = NumberedFileName.number(in: name, extension: fileExtension), value > 0 else { return nil }
        return value
    }

    /// What a log directory holds, sorted out.
    struct Listing {
        /// First sequences of the segments, ascending.
        var segments: [UInt64] = []
        var indexes: Set<UInt64> = []
        /// Names of unfinished writes (`*.tmp`).
        var temporaries: [String] = []
        /// Names that are none of the above, nor `LOCK` or `quarantine`.
        var foreign: [String] = []
    }

    static func list(_ directory: String, _ fileSystem: any FileSystem) throws -> Listing {
        var listing = Listing()
        for name in try io("list the log directory \(directory)", { try fileSystem.listDirectory(directory) }) {
            if let sequence = sequence(in: name, LogFiles.segmentExtension) {
                listing.segments.append(sequence)
            } else if let sequence = sequence(in: name, LogFiles.indexExtension) {
                listing.indexes.insert(sequence)
            } else if name.hasSuffix(LogFiles.temporaryExtension) {
                listing.temporaries.append(name)
            } else if name != LogFiles.lockFileName && name != LogFiles.quarantineDirectoryName {
                listing.foreign.append(name)
            }
        }
        listing.segments.sort()
        return listing
    }
}
