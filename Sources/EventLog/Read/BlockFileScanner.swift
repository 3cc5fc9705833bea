import FileIO

/// Walks the blocks of one block file, checking each header and the link between blocks. The
/// payload is read only when asked for.
final class BlockFileScanner {
    let path: String
    let header: BlockFileHeader
    let window: ReadWindow
    private(set) var position = Int64(LogFormat.blockFileHeaderSize)
    private(set) var blocksRead = 0
    /// The previous block's `chain_after` and last time: what the next block must start from.
    private(set) var chain: ChainHash?
    private(set) var time: Int64?
    private(set) var nextSequence: UInt64
    /// The file's size, modification time and header, once a walk with a header cache has
    /// looked (``skipBlocks(expectChain:expectTime:cache:while:)``).
    private(set) var identity: BlockHeaderCache.Identity?

    let fileSystem: any FileSystem

    init(path: String, header: BlockFileHeader, fileSystem: any FileSystem) throws {
        self.path = path
        self.header = header
        self.fileSystem = fileSystem
        let file = try io("open the block file \(path)") { try fileSystem.openFile(path, .readOnly) }
        self.window = ReadWindow(file: file)
        self.nextSequence = header.firstSequence
    }

    deinit { window.close() }

    /// The next block's header and its stored payload (valid until the next call), or nil after
    /// the last block. `expectChain`/`expectTime` are what the first block must start from.
    func next(expectChain: ChainHash?, expectTime: Int64?) throws -> (header: BlockHeader, offset: Int64, stored: UnsafeRawBufferPointer)? {
        if blocksRead == Int(header.blockCount) {
            let size = try io("read the size of \(path)") { try window.file.size() }
            guard position == size, nextSequence == header.lastSequence + 1 else {
                throw corrupt("its \(header.blockCount) blocks end at offset \(position) and sequence \(nextSequence - 1), not at its end", at: position)
            }
            return nil
        }
        guard let head = try window.bytes(at: position, count: LogFormat.blockHeaderSize) else {
            throw corrupt("an incomplete block header", at: position)
        }
        let block = try checkedHeader(head, expectChain: expectChain, expectTime: expectTime)
        guard let whole = try window.bytes(at: position, count: block.totalSize) else {
            throw corrupt("an incomplete block", at: position)
        }
        let offset = position
        step(past: block)
        return (block, offset, UnsafeRawBufferPointer(rebasing: whole[LogFormat.blockHeaderSize...]))
    }

    /// The next block decoded (its payload checked against its CRC), with its offset; nil after
    /// the last block. A block that does not decode is corruption, named with its place.
    func nextDecoded(
        decompressor: ZstdDecompressor, payloadCodec: (any BlockPayloadCodec)?
    ) throws -> (block: SealedBlock, offset: Int64)? {
        guard let block = try next(expectChain: nil, expectTime: nil) else { return nil }
        switch SealedBlock.decode(block.header, stored: block.stored, decompressor: decompressor, payloadCodec: payloadCodec) {
        case .success(let decoded): return (decoded, block.offset)
        case .failure(let reason):
            throw LogError.corrupt(reason.description, file: path, offset: block.offset, sequence: block.header.firstSequence)
        }
    }

    /// Steps over the blocks for which `skipping` holds, reading their headers alone: a seek
    /// into the middle of a file (open, time travel, `vt show`) costs a small read a block
    /// before it instead of reading and decoding every block from the file's start. The
    /// headers' checks and the chain links between them still hold; the payloads stepped over
    /// are not read, so their CRCs are `verify`'s to check.
    ///
    /// With `cache`, the headers a walk of this file read before are not read again: the walk
    /// starts after the last of them that `skipping` holds for, and notes the new ones it reads.
    /// `skipping` must hold for a first run of blocks and then no more (a sequence or a time
    /// not yet reached), as every caller's does.
    func skipBlocks(
        expectChain: ChainHash?, expectTime: Int64?, cache: BlockHeaderCache? = nil, while skipping: (BlockHeader) -> Bool
    ) throws {
        if let cache, blocksRead == 0 {
            let size = try io("read the size of \(path)") { try window.file.size() }
            if let status = try io("look at \(path)", { try fileSystem.status(path) }) {
                let identity = BlockHeaderCache.Identity(size: size, modificationTime: status.modificationTime, header: header)
                self.identity = identity
                try jump(over: cache.blocks(of: path, identity: identity), expectChain: expectChain, expectTime: expectTime, while: skipping)
            }
        }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: LogFormat.blockHeaderSize, alignment: 8)
        defer { head.deallocate() }
        while blocksRead < Int(header.blockCount) {
            let count = try io("read \(path)") { try window.file.read(into: head, at: position) }
            guard count == LogFormat.blockHeaderSize else { throw corrupt("an incomplete block header", at: position) }
            let block = try checkedHeader(UnsafeRawBufferPointer(head), expectChain: expectChain, expectTime: expectTime)
            if let cache, let identity { cache.note(block, at: position, index: blocksRead, of: path, identity: identity) }
            guard skipping(block) else { return }
            step(past: block)
        }
    }

    /// Steps past the known blocks `skipping` holds for, as a walk would, checking the first
    /// one against what the file must start from (the blocks were read under another caller's
    /// expectations).
    private func jump(
        over known: [(offset: Int64, header: BlockHeader)], expectChain: ChainHash?, expectTime: Int64?,
        while skipping: (BlockHeader) -> Bool
    ) throws {
        guard let first = known.first, skipping(first.header) else { return }
        if let expectChain, first.header.chainBefore != expectChain {
            throw corrupt("a block whose chain_before is not the head where the events before it end (a block is missing or moved)", at: position)
        }
        if let expectTime, first.header.timeBefore != expectTime {
            throw corrupt("a block whose time_before is not the time of the event before it", at: position)
        }
        // The last known block to skip: `skipping` holds for a first run of blocks.
        var low = 0
        var high = known.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if skipping(known[middle].header) { low = middle } else { high = middle - 1 }
        }
        for block in known[...low] {
            precondition(block.offset == position, "a block header cache out of step with its file")
            step(past: block.header)
        }
    }

    /// Steps over the next block, already decoded from this same file (``identity``) by
    /// another reader of it: its header is checked where it stands as a read would check it,
    /// but its payload is not read again.
    func step(overDecoded block: BlockHeader, at offset: Int64, expectChain: ChainHash?, expectTime: Int64?) throws {
        precondition(offset == position && blocksRead < Int(header.blockCount), "a decoded block handed to the wrong place")
        try check(block, expectChain: expectChain, expectTime: expectTime)
        step(past: block)
    }

    private func checkedHeader(_ head: UnsafeRawBufferPointer, expectChain: ChainHash?, expectTime: Int64?) throws -> BlockHeader {
        let block: BlockHeader
        switch BlockHeader.decode(head) {
        case .failure(let reason): throw corrupt(reason.description, at: position)
        case .success(let decoded): block = decoded
        }
        try check(block, expectChain: expectChain, expectTime: expectTime)
        return block
    }

    private func check(_ block: BlockHeader, expectChain: ChainHash?, expectTime: Int64?) throws {
        guard block.firstSequence == nextSequence else {
            throw corrupt("a block that starts at sequence \(block.firstSequence)", at: position)
        }
        if let expected = chain ?? expectChain, block.chainBefore != expected {
            throw corrupt("a block whose chain_before is not the head where the events before it end (a block is missing or moved)", at: position)
        }
        if let expected = time ?? expectTime, block.timeBefore != expected {
            throw corrupt("a block whose time_before is not the time of the event before it", at: position)
        }
        guard block.lastSequence <= header.lastSequence else {
            throw corrupt("a block that runs past the file's \(header.eventCount) events", at: position)
        }
    }

    private func step(past block: BlockHeader) {
        position += Int64(block.totalSize)
        blocksRead += 1
        chain = block.chainAfter
        time = block.lastTime
        nextSequence = block.lastSequence + 1
    }

    func corrupt(_ what: String, at offset: Int64) -> LogError {
        LogError.corrupt(what, file: path, offset: offset, sequence: nextSequence)
    }
}
