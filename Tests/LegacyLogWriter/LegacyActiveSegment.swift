@testable import EventLog
import FileIO

/// The segment being appended to.
struct LegacyActiveSegment {
    let firstSequence: UInt64
    let path: String
    let file: any RandomAccessFile
    /// The end of data: where the next batch goes.
    var dataEnd: Int64
    /// The file's size: `dataEnd` plus any preallocated zeros.
    var allocatedEnd: Int64
    /// Nil once writing the index failed; the next open rebuilds it.
    var index: (any RandomAccessFile)?
    var indexEnd: Int64
    var lastIndexedOffset: Int64?

    /// Opens a segment for appending at `dataEnd`. Its index file must hold `indexEntries`.
    static func open(
        directory: String, firstSequence: UInt64, dataEnd: Int64, indexEntries: [IndexEntry],
        fileSystem: any FileSystem
    ) throws -> LegacyActiveSegment {
        let path = SegmentFiles.segmentPath(directory, firstSequence)
        let file = try io("open the segment \(path) for writing") { try fileSystem.openFile(path, .readWrite) }
        let size = try io("read the size of \(path)") { try file.size() }
        let indexPath = SegmentFiles.indexPath(directory, firstSequence)
        let index = try? fileSystem.openFile(indexPath, .readWrite)
        return LegacyActiveSegment(
            firstSequence: firstSequence, path: path, file: file, dataEnd: dataEnd, allocatedEnd: size,
            index: index,
            indexEnd: Int64(LegacyFormat.indexHeaderSize + indexEntries.count * LegacyFormat.indexEntrySize),
            lastIndexedOffset: indexEntries.last?.offset)
    }
}
