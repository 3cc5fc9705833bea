import FileIO

/// A format-2 log's data files as a reader sees them: block files, then hot-tail segments, each
/// with its first sequence, with any segment that a block file covers (a compaction's leftover)
/// left out (FORMAT.md, "Compaction: the swap protocol").
struct LogDirectory {
    enum Kind: Equatable {
        case blocks(BlockFileHeader)
        case segment
    }

    struct DataFile: Equatable {
        let firstSequence: UInt64
        let kind: Kind
        var path: String
    }

    let directory: String
    let fileSystem: any FileSystem
    private(set) var files: [DataFile] = []
    private(set) var logID: [UInt8]?
    private(set) var origin = LogOrigin.none
    /// Segments hidden because a block file covers them.
    private(set) var covered: [UInt64] = []
    private(set) var temporaries: [String] = []
    /// The first sequences of the segments with a tail checkpoint beside them.
    private(set) var tailCheckpoints: [UInt64] = []
    private(set) var foreign: [String] = []
    /// The block files' headers as earlier refreshes read them: this listing's own, or its
    /// reader's, shared by every lookup and cursor of that reader
    /// (``BlockHeaderCache/fileHeader(of:status:settledBefore:)``).
    private let headers: BlockHeaderCache

    init(directory: String, fileSystem: any FileSystem, headers: BlockHeaderCache? = nil) {
        self.directory = directory
        self.fileSystem = fileSystem
        self.headers = headers ?? BlockHeaderCache()
    }

    /// The chain's head before event 1.
    var anchor: ChainHash? { logID.map { origin.anchor(logID: $0) } }

    /// Lists the directory again and reads the block files' headers.
    mutating func refresh() throws {
        let folder = try io("open the log directory \(directory)") { try fileSystem.openFolder(directory) }
        let listing = LogListing.of(try io("list the log directory \(directory)") { try folder.names() })
        temporaries = listing.temporaries
        tailCheckpoints = listing.tailCheckpoints
        foreign = listing.foreign
        var files: [DataFile] = []
        var end: UInt64 = 0  // the last sequence the block files cover
        var seen: [String: (status: FileStatus, header: BlockFileHeader)] = [:]
        defer { headers.keepFileHeaders(seen) }
        let settledBefore = Duration.microseconds(SystemClock().now().microsecondsSinceEpoch) - .seconds(1)
        for first in listing.blockFiles {
            let name = SegmentFiles.name(first, LogFormat.blockExtension)
            let path = Path.join(directory, name)
            let status = try io("look at \(path)") { try folder.status(name) }
            let header: BlockFileHeader
            if let status, let known = headers.fileHeader(of: path, status: status, settledBefore: settledBefore) {
                header = known
            } else {
                header = try LogDirectory.readBlockFileHeader(path, fileSystem: fileSystem)
            }
            if let status { seen[path] = (status, header) }
            guard header.firstSequence == first else {
                throw LogError(
                    .corrupt, "the log is damaged: \(path) says it starts at sequence \(header.firstSequence), but its name says \(first)",
                    file: path, offset: 16, sequence: first)
            }
            try adopt(logID: header.logID, origin: header.origin, file: path)
            files.append(DataFile(firstSequence: first, kind: .blocks(header), path: path))
            end = max(end, header.lastSequence)
        }
        covered = listing.segments.filter { $0 <= end }
        for first in listing.segments where first > end {
            files.append(DataFile(firstSequence: first, kind: .segment, path: SegmentFiles.segmentPath(directory, first)))
        }
        if logID == nil, let first = files.first, first.kind == .segment {
            let header = try LogDirectory.readSegmentHeader(first.path, fileSystem: fileSystem)
            try adopt(logID: header.logID, origin: header.origin, file: first.path)
        }
        if let first = files.first, first.firstSequence != 1 {
            throw LogError(
                .corrupt,
                "the log is damaged: its first file starts at sequence \(first.firstSequence), so the events before it are"
                    + " missing from \(directory)",
                file: first.path, sequence: 1)
        }
        // Block files must follow one another exactly; the first segment must start right after.
        for (file, next) in zip(files, files.dropFirst()) {
            if case .blocks(let header) = file.kind, header.lastSequence + 1 != next.firstSequence {
                throw LogError(
                    .corrupt,
                    "the log is damaged: \(file.path) ends at sequence \(header.lastSequence), but the next file starts at \(next.firstSequence)",
                    file: next.path, sequence: header.lastSequence + 1)
            }
        }
        self.files = files
    }

    private mutating func adopt(logID: [UInt8], origin: LogOrigin, file: String) throws {
        if let known = self.logID {
            guard known == logID, self.origin == origin else {
                throw LogError(
                    .corrupt, "the log is damaged: \(file) belongs to another log (log id \(hex(logID)), not \(hex(known)))",
                    file: file, offset: 24)
            }
        } else {
            self.logID = logID
            self.origin = origin
        }
    }

    /// The position in ``files`` of the file holding `sequence` (the last starting at or before it).
    func position(holding sequence: UInt64) -> Int? {
        files.lastIndex { $0.firstSequence <= sequence }
    }

    static func readBlockFileHeader(_ path: String, fileSystem: any FileSystem) throws -> BlockFileHeader {
        let file = try io("open the block file \(path)") { try fileSystem.openFile(path, .readOnly) }
        defer { try? file.close() }
        let bytes = try io("read \(path)") { try file.read(count: LogFormat.blockFileHeaderSize, at: 0) }
        return try BlockFileHeader.decode(bytes, file: path)
    }

    static func readSegmentHeader(_ path: String, fileSystem: any FileSystem) throws -> TailSegmentHeader {
        let file = try io("open the segment \(path)") { try fileSystem.openFile(path, .readOnly) }
        defer { try? file.close() }
        let bytes = try io("read \(path)") { try file.read(count: LogFormat.segmentHeaderSize, at: 0) }
        return try checkedSegmentHeader(bytes, path: path)
    }

    static func checkedSegmentHeader(_ bytes: [UInt8], path: String) throws -> TailSegmentHeader {
        guard bytes.count >= 10, Array(bytes[0..<8]) == LogFiles.segmentMagic else {
            throw LogError(.notALog, "\(path) is not a segment of an event log: its first bytes are not VTLOGSEG", file: path, offset: 0)
        }
        let version = bytes.getLittleEndian(UInt16.self, at: 8)
        guard version == LogFormat.segmentVersion else {
            throw LogError(
                .corrupt, "the log is damaged: \(path) is a segment of format \(version) in a format-2 log",
                file: path, offset: 8)
        }
        let header = try TailSegmentHeader.decode(bytes, file: path)
        let expected = SegmentFiles.sequence(in: Path.name(of: path), LogFiles.segmentExtension)
        guard header.firstSequence == expected else {
            throw LogError(
                .corrupt, "the log is damaged: \(path) says it starts at sequence \(header.firstSequence), but its name says \(expected ?? 0)",
                file: path, offset: 16, sequence: expected)
        }
        return header
    }
}
