import FileIO

/// Which format a log directory holds (FORMAT.md, "Which format a directory holds").
public enum LogFormatVersion: Int, Sendable, Hashable, CustomStringConvertible {
    /// Batches with 84-byte headers, a chain over batches.
    case v1 = 1
    /// Hot-tail records and sealed blocks, a chain over events.
    case v2 = 2

    public var description: String { "format \(rawValue)" }

    /// The format of the log in `directory`, or nil when it holds no data file yet.
    public static func of(directory: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> LogFormatVersion? {
        let fileSystem = fileSystem.confined(to: directory)
        let listing = try LogListing.list(directory, fileSystem)
        if !listing.blockFiles.isEmpty { return .v2 }
        guard let first = listing.segments.first else { return nil }
        let path = SegmentFiles.segmentPath(directory, first)
        let file = try io("open the segment \(path)") { try fileSystem.openFile(path, .readOnly) }
        defer { try? file.close() }
        let head = try io("read \(path)") { try file.read(count: LogFormat.segmentHeaderSize, at: 0) }
        guard head.count >= 10, Array(head[0..<8]) == LogFiles.segmentMagic else {
            throw LogError(.notALog, "\(path) is not a segment of an event log: its first bytes are not VTLOGSEG", file: path, offset: 0)
        }
        switch head.getLittleEndian(UInt16.self, at: 8) {
        case 1: return .v1
        case 2: return .v2
        case let version:
            // A version this code does not know is named only when a header's checksum holds:
            // otherwise the version field itself may be the damaged byte.
            func checksumHolds(_ size: Int) -> Bool {
                head.count >= size && head.getLittleEndian(UInt32.self, at: size - 4) == CRC32C.checksum(head[0..<size - 4])
            }
            guard checksumHolds(LegacyFormat.segmentHeaderSize) || checksumHolds(LogFormat.segmentHeaderSize) else {
                throw LogError(.corrupt, "the log is damaged: the header of \(path) fails its checksum", file: path, offset: 0)
            }
            throw LogError(
                .unsupportedVersion, "\(path) has segment format version \(version); this program reads versions 1 and 2",
                file: path, offset: 8)
        }
    }
}
