import FileIO

/// Writes one block file the way FORMAT.md's swap protocol asks (steps 3 to 5): under a
/// temporary name, synced, read back and rehashed against the chain computed while writing,
/// and only then given its name. Compaction feeds it events from sealed segments; an upgrade
/// feeds it a format-1 log's events.
///
/// Memory: one block's events and their compressed form.
struct BlockFileWriter {
    let directory: String
    let firstSequence: UInt64
    let temporaryPath: String
    let finalPath: String
    private let chainBefore: ChainHash
    private let configuration: LogConfiguration
    private let fileSystem: any FileSystem
    private let compressor: ZstdCompressor
    private let file: any RandomAccessFile
    private var builder: BlockBuilder
    private var position = Int64(Format2.blockFileHeaderSize)
    private var buffer: [UInt8] = []
    private var scratch = BlockScratch()
    /// Each written block's chain after it, to check what the disk gives back.
    private var written: [ChainHash] = []
    private var closed = false

    /// Creates `<firstSequence>.blk.tmp` in `directory`, replacing a leftover one.
    init(
        directory: String, firstSequence: UInt64, timeBefore: Int64, chainBefore: ChainHash,
        configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws {
        self.directory = directory
        self.firstSequence = firstSequence
        self.chainBefore = chainBefore
        self.configuration = configuration
        self.fileSystem = fileSystem
        finalPath = SegmentFiles.blockFilePath(directory, firstSequence)
        temporaryPath = finalPath + LogFormat.temporaryExtension
        compressor = try ZstdCompressor(level: configuration.blockCompressionLevel)
        builder = BlockBuilder(firstSequence: firstSequence, timeBefore: timeBefore, chainBefore: chainBefore)
        let path = temporaryPath
        file = try io("create \(path)") { try fileSystem.openFile(path, .createOrTruncate) }
        do {
            // The file header goes first as a placeholder: its counts are known only at the end.
            try io("write \(path)") { try file.write([UInt8](repeating: 0, count: Format2.blockFileHeaderSize), at: 0) }
        } catch {
            abandon()
            throw error
        }
    }

    /// The sequence the next added event gets.
    var nextSequence: UInt64 { builder.firstSequence + UInt64(builder.count) }
    /// The chain's head after the last added event.
    var chainAfter: ChainHash { builder.chainAfter }
    /// The time of the last added event.
    var lastTime: Int64 { builder.lastTime }
    /// Bytes written so far (after ``finish(logID:origin:createdAt:)``, the file's size).
    var bytesWritten: Int64 { position }
    var blockCount: Int { written.count }

    /// Each written block's `chain_after`, in order.
    var blockChains: [ChainHash] { written }

    /// Adds the next event; a full block is written out first (unless the caller decides where
    /// blocks end, as an erase does with ``endBlock()``).
    mutating func add(_ payload: ArraySlice<UInt8>, at time: Int64, flushingWhenFull: Bool = true) throws {
        if flushingWhenFull, builder.count > 0, builder.rawPayloadBytes + payload.count > configuration.blockSize {
            try flush()
        }
        builder.add(payload, at: time)
    }

    /// Adds the next event as erased: its payload's digest and what the caller keeps.
    mutating func addErased(digest: [UInt8], kept: [UInt8], at time: Int64) {
        builder.addErased(digest: digest, kept: kept, at: time)
    }

    /// Ends the current block here (an erase keeps every block where it was).
    mutating func endBlock() throws { try flush() }

    private mutating func flush() throws {
        guard builder.count > 0 else { return }
        buffer.removeAll(keepingCapacity: true)
        let header = builder.encode(
            layout: configuration.blockLayout, compressor: compressor, fieldColumns: configuration.blockFieldColumns,
            scratch: &scratch, into: &buffer)
        let path = temporaryPath, bytes = buffer, offset = position
        try io("write \(path)") { try file.write(bytes, at: offset) }
        position += Int64(buffer.count)
        written.append(header.chainAfter)
        builder = BlockBuilder(firstSequence: header.lastSequence + 1, timeBefore: header.lastTime, chainBefore: header.chainAfter)
    }

    /// Writes the last block and the file header, syncs, reads everything back and rehashes it
    /// (steps 3 and 4). Throws, leaving the temporary file for ``abandon()``, when anything
    /// differs from what was computed while writing.
    mutating func finish(logID: [UInt8], origin: LogOrigin, createdAt: LogTimestamp) throws -> BlockFileHeader {
        precondition(nextSequence > firstSequence, "a block file holds at least one event")
        try flush()
        let header = BlockFileHeader(
            firstSequence: firstSequence, eventCount: nextSequence - firstSequence, logID: logID, origin: origin,
            createdAt: createdAt, blockCount: UInt32(written.count))
        let path = temporaryPath
        try io("write \(path)") { try file.write(header.encoded(), at: 0) }
        try io("sync \(path)") { try file.sync() }
        try? file.close()
        closed = true
        try Self.check(path, header: header, chainBefore: chainBefore, expected: written, fileSystem: fileSystem)
        return header
    }

    /// Step 5, the commit point: the block file gets its name, durably.
    func commit() throws {
        let from = temporaryPath, to = finalPath, directory = directory
        try io("rename \(from) to \(to)") { try fileSystem.rename(from, to: to) }
        try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
    }

    /// Gives up: the temporary file goes, nothing else changed.
    func abandon() {
        if !closed { try? file.close() }
        try? fileSystem.removeFile(temporaryPath)
    }

    /// Reads a written block file back, decodes every block and rehashes every event.
    private static func check(
        _ path: String, header: BlockFileHeader, chainBefore: ChainHash, expected: [ChainHash], fileSystem: any FileSystem
    ) throws {
        let onDisk = try Format2Directory.readBlockFileHeader(path, fileSystem: fileSystem)
        guard onDisk == header else {
            throw LogError(.corrupt, "reading back \(path) gave another header; nothing was changed", file: path, offset: 0)
        }
        let scanner = try BlockFileScanner(path: path, header: header, fileSystem: fileSystem)
        let decompressor = ZstdDecompressor()
        var index = 0
        while let block = try scanner.next(expectChain: chainBefore, expectTime: nil) {
            let decoded = SealedBlock.decode(block.header, stored: block.stored, decompressor: decompressor)
            guard index < expected.count, block.header.chainAfter == expected[index],
                case .success(let sealed) = decoded, sealed.chainHolds()
            else {
                throw LogError(
                    .corrupt, "reading back block \(index) of \(path), its events do not rehash to the chain computed"
                        + " while writing it; nothing was changed",
                    file: path, offset: block.offset, sequence: block.header.firstSequence)
            }
            index += 1
        }
        guard index == expected.count else {
            throw LogError(.corrupt, "reading back \(path) gave \(index) blocks, not \(expected.count)", file: path)
        }
    }
}
