import FileIO

extension LogReader {
    /// One sealed block file of a format-2 log: its events' range and where it lies.
    public struct BlockFile: Sendable, Hashable {
        public var firstSequence: UInt64
        public var lastSequence: UInt64
        public var path: String
    }

    /// The log's block files as the directory holds them now, in order (none for a format-1
    /// log). Each header is read and checked; the blocks are not.
    public func blockFiles() throws -> [BlockFile] {
        try refresh()
        guard format == .v2 else { return [] }
        var files = LogDirectory(directory: directory, fileSystem: fileSystem)
        try files.refresh()
        return files.files.compactMap { file in
            guard case .blocks(let header) = file.kind else { return nil }
            return BlockFile(firstSequence: header.firstSequence, lastSequence: header.lastSequence, path: file.path)
        }
    }
}
