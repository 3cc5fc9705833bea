import FileIO

/// The active hot-tail segment of a format-2 log.
struct ActiveTail {
    let header: TailSegmentHeader
    let path: String
    let file: any RandomAccessFile
    /// The end of data: where the next record goes.
    var dataEnd: Int64
    /// The file's size: `dataEnd` plus any preallocated zeros.
    var allocatedEnd: Int64

    static func open(directory: String, header: TailSegmentHeader, dataEnd: Int64, fileSystem: any FileSystem) throws -> ActiveTail {
        let path = SegmentFiles.segmentPath(directory, header.firstSequence)
        let file = try io("open the segment \(path) for writing") { try fileSystem.openFile(path, .readWrite) }
        let size = try io("read the size of \(path)") { try file.size() }
        return ActiveTail(header: header, path: path, file: file, dataEnd: dataEnd, allocatedEnd: size)
    }
}
