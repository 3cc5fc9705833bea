import FileIO

/// The 136-byte header of a format-2 hot-tail segment (FORMAT.md, "Segment header (136 bytes)").
struct TailSegmentHeader: Equatable {
    var firstSequence: UInt64
    var logID: [UInt8]
    var createdAt: LogTimestamp
    /// The time of event `firstSequence − 1` (−2^63 for the log's first segment).
    var timeBefore: Int64
    /// The chain's head after event `firstSequence − 1`.
    var chainBefore: ChainHash
    var origin: LogOrigin

    func encoded() -> [UInt8] {
        var bytes = LogFormat.segmentMagic
        bytes.appendLittleEndian(Format2.segmentVersion)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.append(contentsOf: logID)
        bytes.appendLittleEndian(createdAt.microsecondsSinceEpoch)
        bytes.appendLittleEndian(timeBefore)
        bytes.append(contentsOf: chainBefore.bytes)
        origin.append(to: &bytes)
        bytes.append(contentsOf: repeatElement(0, count: 4))
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == Format2.segmentHeaderSize)
        return bytes
    }

    /// Reads and checks a header whose first 10 bytes said version 2. `file` names it in errors.
    static func decode(_ bytes: [UInt8], file: String) throws -> TailSegmentHeader {
        guard bytes.count >= Format2.segmentHeaderSize else {
            throw LogError(
                .corrupt, "the log is damaged: \(file) is \(bytes.count) bytes long, shorter than its header",
                file: file, offset: 0)
        }
        let crcOffset = Format2.segmentHeaderCRCOffset
        guard bytes.getLittleEndian(UInt32.self, at: crcOffset) == CRC32C.checksum(bytes[0..<crcOffset]) else {
            throw LogError(.corrupt, "the log is damaged: the header of \(file) fails its checksum", file: file, offset: 0)
        }
        guard bytes[10..<16].allSatisfy({ $0 == 0 }), bytes[128..<132].allSatisfy({ $0 == 0 }) else {
            throw LogError(.corrupt, "the log is damaged: reserved bytes of \(file)'s header are not zero", file: file, offset: 0)
        }
        let chain = Format2.segmentChainBeforeOffset
        return TailSegmentHeader(
            firstSequence: bytes.getLittleEndian(UInt64.self, at: LogFormat.segmentFirstSequenceOffset),
            logID: Array(bytes[24..<40]),
            createdAt: LogTimestamp(microsecondsSinceEpoch: bytes.getLittleEndian(Int64.self, at: 40)),
            timeBefore: bytes.getLittleEndian(Int64.self, at: Format2.segmentTimeBeforeOffset),
            chainBefore: ChainHash(bytes: Array(bytes[chain..<chain + 32])),
            origin: try LogOrigin(bytes, at: Format2.segmentOriginSequenceOffset, file: file))
    }
}

/// Where a format-2 log's chain is anchored: nothing (a new log), or the format-1 log it was
/// upgraded from (FORMAT.md, "Upgrade from format 1").
public struct LogOrigin: Equatable, Sendable {
    /// Events carried over from a format-1 log; 0 for a log created in format 2.
    public var sequence: UInt64
    /// The format-1 head hash at ``sequence``; nil when that is 0.
    public var hash: ChainHash?

    public static let none = LogOrigin(sequence: 0, hash: nil)

    public init(sequence: UInt64, hash: ChainHash?) {
        self.sequence = sequence
        self.hash = sequence == 0 ? nil : hash
    }

    /// Reads the 40 bytes at `offset`. A hash without carried-over events, or carried-over
    /// events without a hash, is corruption: the anchor hashes the bytes as stored, so either
    /// would let two files claim one origin with different bytes.
    init(_ bytes: [UInt8], at offset: Int, file: String) throws {
        let sequence = bytes.getLittleEndian(UInt64.self, at: offset)
        let hash = Array(bytes[offset + 8..<offset + 40])
        let zero = hash.allSatisfy { $0 == 0 }
        guard zero == (sequence == 0) else {
            throw LogError(
                .corrupt,
                "the log is damaged: \(file)'s origin_hash is \(zero ? "zero" : "not zero") while its origin_sequence is \(sequence)",
                file: file, offset: Int64(offset))
        }
        self.init(sequence: sequence, hash: zero ? nil : ChainHash(bytes: hash))
    }

    func append(to bytes: inout [UInt8]) {
        bytes.appendLittleEndian(sequence)
        bytes.append(contentsOf: hash?.bytes ?? [UInt8](repeating: 0, count: 32))
    }

    func anchor(logID: [UInt8]) -> ChainHash {
        EventChain.anchor(logID: logID, originSequence: sequence, originHash: hash)
    }
}

/// The 120-byte header of a block file (FORMAT.md, "File header (120 bytes)").
struct BlockFileHeader: Equatable {
    var firstSequence: UInt64
    var eventCount: UInt64
    var logID: [UInt8]
    var origin: LogOrigin
    var createdAt: LogTimestamp
    var blockCount: UInt32

    var lastSequence: UInt64 { firstSequence + eventCount - 1 }

    func encoded() -> [UInt8] {
        var bytes = Format2.blockFileMagic
        bytes.appendLittleEndian(Format2.blockFileVersion)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.appendLittleEndian(eventCount)
        bytes.append(contentsOf: logID)
        origin.append(to: &bytes)
        bytes.appendLittleEndian(createdAt.microsecondsSinceEpoch)
        bytes.appendLittleEndian(blockCount)
        bytes.append(contentsOf: repeatElement(0, count: 16))
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == Format2.blockFileHeaderSize)
        return bytes
    }

    static func decode(_ bytes: [UInt8], file: String) throws -> BlockFileHeader {
        func corrupt(_ what: String, at offset: Int64 = 0) -> LogError {
            LogError(.corrupt, "the log is damaged: \(file) \(what)", file: file, offset: offset)
        }
        guard bytes.count >= Format2.blockFileHeaderSize else { throw corrupt("is shorter than a block file header") }
        guard Array(bytes[0..<8]) == Format2.blockFileMagic else {
            throw LogError(.notALog, "\(file) is not a block file of an event log: its first bytes are not VTLOGBLK", file: file, offset: 0)
        }
        let crcOffset = Format2.blockFileHeaderCRCOffset
        guard bytes.getLittleEndian(UInt32.self, at: crcOffset) == CRC32C.checksum(bytes[0..<crcOffset]) else {
            throw corrupt("has a header that fails its checksum")
        }
        let version = bytes.getLittleEndian(UInt16.self, at: 8)
        guard version == Format2.blockFileVersion else {
            throw LogError(
                .unsupportedVersion, "\(file) has block file version \(version); this program reads version 2",
                file: file, offset: 8)
        }
        guard bytes[10..<16].allSatisfy({ $0 == 0 }), bytes[100..<116].allSatisfy({ $0 == 0 }) else {
            throw corrupt("has reserved header bytes that are not zero")
        }
        let header = BlockFileHeader(
            firstSequence: bytes.getLittleEndian(UInt64.self, at: 16),
            eventCount: bytes.getLittleEndian(UInt64.self, at: 24),
            logID: Array(bytes[32..<48]),
            origin: try LogOrigin(bytes, at: 48, file: file),
            createdAt: LogTimestamp(microsecondsSinceEpoch: bytes.getLittleEndian(Int64.self, at: 88)),
            blockCount: bytes.getLittleEndian(UInt32.self, at: 96))
        guard header.firstSequence >= 1, header.eventCount >= 1, header.blockCount >= 1,
            header.firstSequence <= UInt64.max - header.eventCount
        else { throw corrupt("has a header stating no events, no blocks or sequences past 2^64") }
        return header
    }
}

/// The data files of a format-2 log directory (FORMAT.md, part "Format 2", "The directory").
struct Format2Listing {
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

    static func list(_ directory: String, _ fileSystem: any FileSystem) throws -> Format2Listing {
        var listing = Format2Listing()
        for name in try io("list the log directory \(directory)", { try fileSystem.listDirectory(directory) }) {
            if let sequence = SegmentFiles.sequence(in: name, Format2.blockExtension) {
                listing.blockFiles.append(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, LogFormat.segmentExtension) {
                listing.segments.append(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, LogFormat.indexExtension) {
                listing.indexes.insert(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, KeySummary.fileExtension) {
                listing.keySummaries.append(sequence)
            } else if let sequence = SegmentFiles.sequence(in: name, TailCheckpoint.fileExtension) {
                listing.tailCheckpoints.append(sequence)
            } else if name.hasSuffix(LogFormat.temporaryExtension) {
                listing.temporaries.append(name)
            } else if name != LogFormat.lockFileName && name != LogFormat.quarantineDirectoryName {
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
        Path.join(directory, name(firstSequence, Format2.blockExtension))
    }
}

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
        let listing = try Format2Listing.list(directory, fileSystem)
        if !listing.blockFiles.isEmpty { return .v2 }
        guard let first = listing.segments.first else { return nil }
        let path = SegmentFiles.segmentPath(directory, first)
        let file = try io("open the segment \(path)") { try fileSystem.openFile(path, .readOnly) }
        defer { try? file.close() }
        let head = try io("read \(path)") { try file.read(count: Format2.segmentHeaderSize, at: 0) }
        guard head.count >= 10, Array(head[0..<8]) == LogFormat.segmentMagic else {
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
            guard checksumHolds(LogFormat.segmentHeaderSize) || checksumHolds(Format2.segmentHeaderSize) else {
                throw LogError(.corrupt, "the log is damaged: the header of \(path) fails its checksum", file: path, offset: 0)
            }
            throw LogError(
                .unsupportedVersion, "\(path) has segment format version \(version); this program reads versions 1 and 2",
                file: path, offset: 8)
        }
    }
}
