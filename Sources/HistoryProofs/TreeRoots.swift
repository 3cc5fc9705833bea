import EventLog
import FileIO
import Foundation
import Proofs

/// The roots of a log's aligned chunks of 4,096 leaves, kept in a file so that a proof reads
/// the roots instead of every event (docs/PROOFS.md, "Keeping the tree so that a proof reads no
/// payload"). A cache of what the log says: a record damaged or cut short, and everything after
/// it, is made again from the log.
public final class TreeRoots {
    public static let chunkPower: UInt8 = 12
    public static let chunk: UInt64 = 1 << 12
    static let magic = Array("VTTR".utf8)
    static let headerSize = 25
    static let recordSize = 36

    public let path: String
    let logID: [UInt8]
    /// The valid roots, chunk by chunk from the first.
    public private(set) var roots: [TreeHash] = []

    /// Reads the file at `path` for the log `logID` (none, or one of another log or damaged,
    /// reads as no roots: it is written again from the first chunk).
    public init(path: String, logID: [UInt8]) {
        self.path = path
        self.logID = logID
        guard let data = FileManager.default.contents(atPath: path) else { return }
        let bytes = Array(data)
        guard bytes.count >= Self.headerSize, Array(bytes.prefix(Self.headerSize)) == header() else { return }
        var offset = Self.headerSize
        while offset + Self.recordSize <= bytes.count {
            let root = Array(bytes[offset..<offset + 32])
            guard crc(of: UInt64(roots.count), root) == bytes.readLittleEndian(UInt32.self, at: offset + 32) else { break }
            roots.append(TreeHash(root)!)
            offset += Self.recordSize
        }
    }

    private func header() -> [UInt8] {
        var bytes = Self.magic + [Self.chunkPower] + logID
        var crc = CRC32C()
        crc.update(bytes)
        bytes.appendLittleEndian(crc.value)
        return bytes
    }

    private func crc(of index: UInt64, _ root: [UInt8]) -> UInt32 {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(index)
        var crc = CRC32C()
        crc.update(bytes + root)
        return crc.value
    }

    /// Appends the root of chunk `roots.count`. Written at once (the file is a cache: a write
    /// lost to a crash is made again); a failure to write only leaves the root unkept.
    func append(_ root: TreeHash) {
        let index = UInt64(roots.count)
        var record = root.bytes
        record.appendLittleEndian(crc(of: index, root.bytes))
        roots.append(root)
        do {
            let fileSystem = PosixFileSystem()
            let folder = Path.directory(of: path)
            if try fileSystem.status(folder) == nil { try fileSystem.createDirectoryDurably(folder) }
            let exists = try fileSystem.exists(path)
            let file = try fileSystem.openFile(path, exists ? .readWrite : .createNew)
            defer { try? file.close() }
            let start = Int64(Self.headerSize) + Int64(index) * Int64(Self.recordSize)
            if !exists || index == 0 { try file.write(header(), at: 0) }
            try file.write(record, at: start)
            if try file.size() > start + Int64(Self.recordSize) { try file.truncate(to: start + Int64(Self.recordSize)) }
        } catch {
            roots.removeLast()
        }
    }
}
