import FileIO

/// Taking another copy's block file whole (FORMAT.md, "Taking another copy's block file whole"):
/// its bytes are kept as they are, so a new copy of a log costs a read, a write and one check
/// of each block instead of encoding every event again.
extension LogBuilder {
    /// Takes the block file at `source`, a file of another copy of this log that starts at
    /// ``nextSequence``, byte for byte, once the copy written here is checked: its header, every
    /// block's checksums and links to the chain so far, and every block's events rehashed.
    /// `accepting` sees the file's events, in order, before the file gets its name; when it
    /// returns false the file is not taken and nothing changed (the caller adds the events its
    /// own way).
    ///
    /// - Throws: ``LogError`` `.corrupt` when the file is damaged, belongs to another log or does
    ///   not follow the events so far (nothing is taken); the I/O's errors; `accepting`'s.
    /// - Returns: whether the file was taken.
    @discardableResult
    public mutating func adopt(
        blockFileAt source: String, sourceFileSystem: any FileSystem = PosixFileSystem(), accepting: ([LogEvent]) throws -> Bool
    ) throws -> Bool {
        precondition(!finished, "the log is finished")
        try closeFile()
        let bytes = try io("read \(source)") {
            let file = try sourceFileSystem.openFile(source, .readOnly)
            defer { try? file.close() }
            return try file.readAll()
        }
        let finalPath = SegmentFiles.blockFilePath(directory, nextSequence)
        let temporary = finalPath + LogFiles.temporaryExtension
        let fileSystem = fileSystem
        try io("write \(temporary)") {
            let file = try fileSystem.openFile(temporary, .createOrTruncate)
            defer { try? file.close() }
            try file.write(bytes, at: 0)
            try file.sync()
        }
        do {
            let (header, events, summary, last) = try checkAdopted(temporary, copiedFrom: source)
            guard try accepting(events) else {
                try? fileSystem.removeFile(temporary)
                return false
            }
            try io("rename \(temporary) to \(finalPath)") { try fileSystem.rename(temporary, to: finalPath) }
            try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
            // A summary only saves reading: failing to write it is no error (as after a compaction).
            if let summary { try? summary.write(beside: header, in: directory, fileSystem: fileSystem) }
            chain = last.chain
            time = last.time
            nextSequence = header.lastSequence + 1
            return true
        } catch {
            try? fileSystem.removeFile(temporary)
            throw error
        }
    }

    /// Checks the copy written at `path` as one of this log's next block files, and gives its
    /// header, events, key summary (when the configuration names a key function) and where the
    /// chain and time end.
    private func checkAdopted(
        _ path: String, copiedFrom source: String
    ) throws -> (BlockFileHeader, [LogEvent], KeySummary?, (chain: ChainHash, time: Int64)) {
        let header = try LogDirectory.readBlockFileHeader(path, fileSystem: fileSystem)
        guard header.firstSequence == nextSequence, header.logID == identity.logID, header.origin == identity.origin else {
            throw LogError(
                .corrupt, "\(source) is not this log's block file from event \(nextSequence) (it starts at \(header.firstSequence)"
                    + " or belongs to another log); nothing was taken", file: source)
        }
        let scanner = try BlockFileScanner(path: path, header: header, fileSystem: fileSystem)
        let decompressor = ZstdDecompressor()
        var collector = configuration.blockKeys.map(KeySummaryCollector.init)
        var events: [LogEvent] = []
        var last = (chain: chain, time: time)
        while let block = try scanner.next(expectChain: chain, expectTime: time) {
            let decoded: SealedBlock
            switch SealedBlock.decode(block.header, stored: block.stored, decompressor: decompressor, payloadCodec: configuration.payloadCodec) {
            case .success(let value): decoded = value
            case .failure(let reason):
                throw LogError.corrupt(reason.description + " (copied from \(source))", file: path, offset: block.offset, sequence: block.header.firstSequence)
            }
            guard decoded.chainHolds() else {
                throw LogError.corrupt(
                    "the events of the block from \(block.header.firstSequence) do not rehash to its chain_after (copied from \(source)); nothing was taken",
                    file: path, offset: block.offset, sequence: block.header.firstSequence)
            }
            events += decoded.events
            collector?.append(decoded)
            last = (block.header.chainAfter, block.header.lastTime)
        }
        return (header, events, collector?.summary, last)
    }
}
