import Dispatch
import FileIO
import Synchronization

/// What a writer knew at a point of the active segment it had synced (while running, and at a
/// clean close): the end of data there and the chain's head (FORMAT.md, "Tail checkpoint"),
/// and where that writer started appending when it was in this segment (``start``).
/// Derived data: an opening writer starts from it, rehashing only the records after it, when
/// the records up to it pass their framing and CRCs and one ends exactly there, and checks it
/// in the background (``TailCheck``).
struct TailCheckpoint: Equatable {
    var firstSequence: UInt64
    var logID: [UInt8]
    var dataEnd: Int64
    var nextSequence: UInt64
    var lastTime: Int64
    var chain: ChainHash
    /// Where the writer that left it started appending (the end of data its open found), when
    /// that was in this segment: where a store took its snapshot at the last clean close.
    var start: Point? = nil

    /// The checkpoint's own point: its end of data and what the writer knew there.
    var end: Point { Point(dataEnd: dataEnd, nextSequence: nextSequence, lastTime: lastTime, chain: chain) }

    /// A point of the segment: the end of data there, the next sequence, the last event's time
    /// and the chain's head after it.
    struct Point: Equatable {
        var dataEnd: Int64
        var nextSequence: UInt64
        var lastTime: Int64
        var chain: ChainHash
    }

    static let magic: [UInt8] = Array("VTLOGHED".utf8)
    static let version: UInt16 = 2
    /// Version 2's size and checksum place; version 1 (no start) had the checksum at 96.
    static let size = 156
    static let crcOffset = 152
    static let versionOneSize = 100
    static let fileExtension = ".head"

    static func path(_ directory: String, _ firstSequence: UInt64) -> String {
        Path.join(directory, SegmentFiles.name(firstSequence, fileExtension))
    }

    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.appendLittleEndian(Self.version)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.append(contentsOf: logID)
        bytes.appendLittleEndian(UInt64(dataEnd))
        bytes.appendLittleEndian(nextSequence)
        bytes.appendLittleEndian(lastTime)
        bytes.append(contentsOf: chain.bytes)
        if let start {
            bytes.appendLittleEndian(UInt64(start.dataEnd))
            bytes.appendLittleEndian(start.nextSequence)
            bytes.appendLittleEndian(start.lastTime)
            bytes.append(contentsOf: start.chain.bytes)
        } else {
            bytes.append(contentsOf: repeatElement(0, count: 56))
        }
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == Self.size)
        return bytes
    }

    /// The checkpoint in `bytes`, when they are one for the segment with `header` (nil otherwise):
    /// version 2, or version 1 (without a start). A start that breaks FORMAT.md's rules is left
    /// out, and the rest still used.
    static func decode(_ bytes: [UInt8], for header: TailSegmentHeader) -> TailCheckpoint? {
        guard bytes.count >= versionOneSize, Array(bytes[0..<8]) == magic else { return nil }
        let version = bytes.getLittleEndian(UInt16.self, at: 8)
        let crcAt = version == 1 ? versionOneSize - 4 : crcOffset
        guard version == 1 || version == 2, bytes.count == crcAt + 4,
            bytes.getLittleEndian(UInt32.self, at: crcAt) == CRC32C.checksum(bytes[0..<crcAt]), bytes[10..<16].allSatisfy({ $0 == 0 }),
            bytes.getLittleEndian(UInt64.self, at: 16) == header.firstSequence, Array(bytes[24..<40]) == header.logID
        else { return nil }
        let dataEnd = bytes.getLittleEndian(UInt64.self, at: 40)
        let next = bytes.getLittleEndian(UInt64.self, at: 48)
        let lastTime = bytes.getLittleEndian(Int64.self, at: 56)
        guard dataEnd >= UInt64(LogFormat.segmentHeaderSize), dataEnd <= UInt64(Int64.max), next >= header.firstSequence,
            lastTime >= header.timeBefore
        else { return nil }
        var checkpoint = TailCheckpoint(
            firstSequence: header.firstSequence, logID: header.logID, dataEnd: Int64(dataEnd), nextSequence: next,
            lastTime: lastTime, chain: ChainHash(bytes: Array(bytes[64..<96])))
        if version == 2 {
            let startEnd = bytes.getLittleEndian(UInt64.self, at: 96)
            let startNext = bytes.getLittleEndian(UInt64.self, at: 104)
            let startTime = bytes.getLittleEndian(Int64.self, at: 112)
            if startEnd >= UInt64(LogFormat.segmentHeaderSize), startEnd <= dataEnd,
                (header.firstSequence...next).contains(startNext), (header.timeBefore...lastTime).contains(startTime)
            {
                checkpoint.start = Point(
                    dataEnd: Int64(startEnd), nextSequence: startNext, lastTime: startTime,
                    chain: ChainHash(bytes: Array(bytes[120..<152])))
            }
        }
        return checkpoint
    }

    /// The checkpoint beside the segment with `header`, if there is a well-formed one for it.
    static func read(for header: TailSegmentHeader, in directory: String, fileSystem: any FileSystem) -> TailCheckpoint? {
        guard let file = try? fileSystem.openFile(path(directory, header.firstSequence), .readOnly) else { return nil }
        defer { try? file.close() }
        guard let bytes = try? file.read(count: size + 1, at: 0) else { return nil }
        return decode(bytes, for: header)
    }

    /// Writes it beside its segment (derived data, unsynced).
    func write(in directory: String, fileSystem: any FileSystem) throws {
        try fileSystem.writeDerived(encoded(), to: Self.path(directory, firstSequence))
    }
}
