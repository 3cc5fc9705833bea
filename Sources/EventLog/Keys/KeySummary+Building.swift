import FileIO

/// Building the key summaries a log lacks: block files written before a key function was
/// configured, or whose summary a crash lost (FORMAT.md, "Key summaries").
enum KeySummaryBuilding {
    /// Builds a summary for every block file in `directory` without a usable one for `keys`,
    /// and removes summaries whose block file is gone. Returns how many it built.
    ///
    /// Cost: each such file read and decoded once (about 200 ns an event), one file at a time;
    /// `isCancelled` is asked before each file and every few thousand events, and a cancelled
    /// build throws ``CompactionCancelled`` keeping the summaries already written.
    static func buildMissing(
        directory: String, keys: BlockKeys, payloadCodec: (any BlockPayloadCodec)?, fileSystem: any FileSystem,
        isCancelled: () -> Bool = { false }
    ) throws -> Int {
        let listing = try LogListing.list(directory, fileSystem)
        let blockFiles = Set(listing.blockFiles)
        for orphan in listing.keySummaries where !blockFiles.contains(orphan) {
            let path = KeySummary.path(directory, orphan)
            try io("remove \(path), whose block file is gone") { try fileSystem.removeFile(path) }
        }
        var built = 0
        for first in listing.blockFiles {
            if isCancelled() { throw CompactionCancelled() }
            let path = SegmentFiles.blockFilePath(directory, first)
            let header = try LogDirectory.readBlockFileHeader(path, fileSystem: fileSystem)
            guard KeySummary.read(beside: header, in: directory, function: keys.name, fileSystem: fileSystem) == nil else { continue }
            let summary = try summarize(
                path, header: header, keys: keys, payloadCodec: payloadCodec, fileSystem: fileSystem, isCancelled: isCancelled)
            try summary.write(beside: header, in: directory, fileSystem: fileSystem)
            built += 1
        }
        return built
    }

    /// The summary of the block file at `path`, from its events as they are now (an erased
    /// event has no key).
    static func summarize(
        _ path: String, header: BlockFileHeader, keys: BlockKeys, payloadCodec: (any BlockPayloadCodec)?,
        fileSystem: any FileSystem, isCancelled: () -> Bool
    ) throws -> KeySummary {
        let scanner = try BlockFileScanner(path: path, header: header, fileSystem: fileSystem)
        let decompressor = ZstdDecompressor()
        var collector = KeySummaryCollector(keys)
        var sinceAsked = 0
        while let (block, _) = try scanner.nextDecoded(decompressor: decompressor, payloadCodec: payloadCodec) {
            collector.append(block)
            sinceAsked += Int(block.header.eventCount)
            if sinceAsked >= Compaction.eventsBetweenCancellationChecks {
                sinceAsked = 0
                if isCancelled() { throw CompactionCancelled() }
            }
        }
        return collector.summary
    }
}

extension SealedBlock {
    /// The distinct keys of the block's events, ascending: what its entry in a key summary for
    /// `keys` lists (an erased event carries none).
    func distinctKeys(_ keys: BlockKeys) -> [UInt64] {
        var collector = KeySummaryCollector(keys)
        collector.append(self)
        return collector.blocks[0].keys
    }
}
