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
    private var position = Int64(LogFormat.blockFileHeaderSize)
    private var buffer: [UInt8] = []
    private var scratch: BlockScratch
    /// Each written block's header, as written: what the disk must give back.
    private var written: [BlockHeader] = []
    private var closed = false
    /// Whether the chain is derived from the blocks as encoded rather than from the events as
    /// added: see ``init(directory:firstSequence:timeBefore:chainBefore:configuration:fileSystem:chainFromBlocks:)``.
    private let chainFromBlocks: Bool
    /// Chain heads the events must reach (``expect(_:after:else:)``) not yet checked.
    private var expectations: [(sequence: UInt64, chain: ChainHash, error: LogError)] = []
    private let decompressor = ZstdDecompressor()
    /// The keys of each block's events, when the configuration names a key function.
    private var keys: KeySummaryCollector?
    /// The file's header, once ``finish(logID:origin:createdAt:)`` wrote it.
    private var finished: BlockFileHeader?

    /// Creates `<firstSequence>.blk.tmp` in `directory`, replacing a leftover one.
    ///
    /// With `chainFromBlocks` (compaction), events are not hashed as they are added: each
    /// block, once encoded, is decoded again in memory and its events hashed, so the chain in
    /// its header is derived from the bytes written, once, and checked against the chain heads
    /// the old files state (``expect(_:after:else:)``); the file read back from disk must then
    /// give every block's header and checksum. Without it, the chain is computed as events are
    /// added and every block read back from disk is decoded and rehashed.
    init(
        directory: String, firstSequence: UInt64, timeBefore: Int64, chainBefore: ChainHash,
        configuration: LogConfiguration, fileSystem: any FileSystem, chainFromBlocks: Bool = false
    ) throws {
        self.chainFromBlocks = chainFromBlocks
        self.directory = directory
        self.firstSequence = firstSequence
        self.chainBefore = chainBefore
        self.configuration = configuration
        self.fileSystem = fileSystem
        finalPath = SegmentFiles.blockFilePath(directory, firstSequence)
        temporaryPath = finalPath + LogFiles.temporaryExtension
        compressor = try ZstdCompressor(level: configuration.blockCompressionLevel)
        scratch = BlockScratch(payloadCodec: configuration.payloadCodec)
        builder = BlockBuilder(firstSequence: firstSequence, timeBefore: timeBefore, chainBefore: chainBefore, hashesEvents: !chainFromBlocks)
        keys = configuration.blockKeys.map(KeySummaryCollector.init)
        let path = temporaryPath
        file = try io("create \(path)") { try fileSystem.openFile(path, .createOrTruncate) }
        do {
            // The file header goes first as a placeholder: its counts are known only at the end.
            try io("write \(path)") { try file.write([UInt8](repeating: 0, count: LogFormat.blockFileHeaderSize), at: 0) }
        } catch {
            abandon()
            throw error
        }
    }

    /// The sequence the next added event gets.
    var nextSequence: UInt64 { builder.firstSequence + UInt64(builder.count) }
    /// The chain's head after the last added event (not with `chainFromBlocks`, which knows
    /// it only once the block is encoded).
    var chainAfter: ChainHash {
        precondition(!chainFromBlocks, "with chainFromBlocks the chain is known only as blocks are written")
        return builder.chainAfter
    }

    /// Asks that the chain's head after event `sequence` (the last added, or the one before the
    /// first) be `chain`; `error` is thrown when it is not — now, when that head is already
    /// known, else when its block is written.
    mutating func expect(_ chain: ChainHash, after sequence: UInt64, else error: LogError) throws {
        precondition(chainFromBlocks && sequence == nextSequence - 1)
        if sequence == builder.firstSequence - 1 {
            guard chain == builder.chainBefore else { throw error }
        } else {
            expectations.append((sequence, chain, error))
        }
    }
    /// The time of the last added event.
    var lastTime: Int64 { builder.lastTime }
    /// Bytes written so far (after ``finish(logID:origin:createdAt:)``, the file's size).
    var bytesWritten: Int64 { position }
    var blockCount: Int { written.count }

    /// Each written block's `chain_after`, in order.
    var blockChains: [ChainHash] { written.map(\.chainAfter) }

    /// Adds the next event; a full block is written out first (unless the caller decides where
    /// blocks end, as an erase does with ``endBlock()``).
    mutating func add(_ payload: ArraySlice<UInt8>, at time: Int64, flushingWhenFull: Bool = true) throws {
        if flushingWhenFull, builder.count > 0, builder.rawPayloadBytes + payload.count > configuration.blockSize {
            try flush()
        }
        builder.add(payload, at: time)
        keys?.add(payload)
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
        var header = builder.encode(
            layout: configuration.blockLayout, compressor: compressor, scratch: &scratch, into: &buffer)
        if chainFromBlocks { header = try chainFromEncoded(header) }
        let path = temporaryPath, bytes = buffer, offset = position
        try io("write \(path)") { try file.write(bytes, at: offset) }
        position += Int64(buffer.count)
        written.append(header)
        keys?.endBlock(startingAt: header.firstSequence)
        builder = BlockBuilder(
            firstSequence: header.lastSequence + 1, timeBefore: header.lastTime, chainBefore: header.chainAfter,
            hashesEvents: !chainFromBlocks)
    }

    /// Decodes the block just encoded into `buffer` and hashes its events: the chain after
    /// it, put into its header, and the heads asked for inside it, checked.
    private mutating func chainFromEncoded(_ encoded: BlockHeader) throws -> BlockHeader {
        let stored = buffer.withUnsafeBytes { bytes in
            SealedBlock.decode(
                encoded, stored: UnsafeRawBufferPointer(rebasing: bytes[LogFormat.blockHeaderSize..<encoded.totalSize]),
                decompressor: decompressor, payloadCodec: configuration.payloadCodec)
        }
        guard case .success(let block) = stored else {
            throw LogError(
                .corrupt, "the block of events \(encoded.firstSequence) to \(encoded.lastSequence) did not decode as it was"
                    + " written; nothing was changed", file: temporaryPath, sequence: encoded.firstSequence)
        }
        let due = expectations.prefix { $0.sequence <= encoded.lastSequence }
        let (head, reached) = block.rehash(reporting: due.map(\.sequence))
        for (expected, chain) in zip(due, reached) where expected.chain != chain { throw expected.error }
        expectations.removeFirst(due.count)
        var header = encoded
        header.chainAfter = head
        buffer.replaceSubrange(0..<LogFormat.blockHeaderSize, with: header.encoded())
        return header
    }

    /// Writes the last block and the file header, syncs, reads everything back and rehashes it
    /// (steps 3 and 4). Throws, leaving the temporary file for ``abandon()``, when anything
    /// differs from what was computed while writing.
    mutating func finish(logID: [UInt8], origin: LogOrigin, createdAt: LogTimestamp) throws -> BlockFileHeader {
        precondition(nextSequence > firstSequence, "a block file holds at least one event")
        try flush()
        precondition(expectations.isEmpty, "every chain head asked for is checked by the last block")
        let header = BlockFileHeader(
            firstSequence: firstSequence, eventCount: nextSequence - firstSequence, logID: logID, origin: origin,
            createdAt: createdAt, blockCount: UInt32(written.count))
        let path = temporaryPath
        try io("write \(path)") { try file.write(header.encoded(), at: 0) }
        try io("sync \(path)") { try file.sync() }
        try? file.close()
        closed = true
        try Self.check(
            path, header: header, chainBefore: chainBefore, written: written, rehashing: !chainFromBlocks,
            payloadCodec: configuration.payloadCodec, fileSystem: fileSystem)
        finished = header
        return header
    }

    /// Step 5, the commit point: the block file gets its name, durably. A key summary of the
    /// file it replaces goes first, durably, and
    /// the new file's follows it (FORMAT.md, "Key summaries"); failing to write that one costs
    /// only speed, so it is not an error.
    func commit() throws {
        let from = temporaryPath, to = finalPath, directory = directory
        let summary = KeySummary.path(directory, firstSequence)
        if try io("look at \(summary)", { try fileSystem.exists(summary) }) {
            try io("remove \(summary)") { try fileSystem.removeFile(summary) }
            // Durably gone before the new file is named: a disk that reorders unsynced changes
            // could otherwise keep the rename and lose the removal, leaving the old file's
            // summary beside the new one (an erase's rewrite carries fewer keys).
            try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
        }
        try io("rename \(from) to \(to)") { try fileSystem.rename(from, to: to) }
        try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
        if let keys, let finished {
            try? keys.summary.write(beside: finished, in: directory, fileSystem: fileSystem)
        }
    }

    /// Gives up: the temporary file goes, nothing else changed.
    func abandon() {
        if !closed { try? file.close() }
        try? fileSystem.removeFile(temporaryPath)
    }

    /// Reads a written block file back and checks that every block header is the one written
    /// and every payload matches its checksum; `rehashing` (the chain was computed as events
    /// were added, not from the encoded blocks), also that each decodes and its events rehash
    /// to its chain.
    private static func check(
        _ path: String, header: BlockFileHeader, chainBefore: ChainHash, written: [BlockHeader], rehashing: Bool,
        payloadCodec: (any BlockPayloadCodec)?, fileSystem: any FileSystem
    ) throws {
        let onDisk = try LogDirectory.readBlockFileHeader(path, fileSystem: fileSystem)
        guard onDisk == header else {
            throw LogError(.corrupt, "reading back \(path) gave another header; nothing was changed", file: path, offset: 0)
        }
        let scanner = try BlockFileScanner(path: path, header: header, fileSystem: fileSystem)
        let decompressor = ZstdDecompressor()
        var index = 0
        while let block = try scanner.next(expectChain: chainBefore, expectTime: nil) {
            var holds = index < written.count && block.header == written[index]
            if holds, rehashing {
                // SealedBlock.decode checks the payload's CRC as it goes.
                let decoded = SealedBlock.decode(
                    block.header, stored: block.stored, decompressor: decompressor, payloadCodec: payloadCodec)
                holds = (try? decoded.get())?.chainHolds() == true
            } else if holds {
                holds = CRC32C.checksum(block.stored) == block.header.payloadCRC
            }
            guard holds else {
                throw LogError(
                    .corrupt, "reading back block \(index) of \(path), it is not the block written"
                        + (rehashing ? " (or its events do not rehash to the chain computed while writing it)" : "")
                        + "; nothing was changed",
                    file: path, offset: block.offset, sequence: block.header.firstSequence)
            }
            index += 1
        }
        guard index == written.count else {
            throw LogError(.corrupt, "reading back \(path) gave \(index) blocks, not \(written.count)", file: path)
        }
    }
}
