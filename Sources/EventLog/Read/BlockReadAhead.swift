import Foundation

/// Reads, checks and decompresses a block file's next block on another core while the cursor
/// hands out the events of the block before it, so that a long replay's read stage overlaps
/// its decoding and folding (docs/BENCHMARKS-JOURNAL.md, "Replay at memory speed").
///
/// At most one block is in flight, so memory stays O(one block). The scanner is used by one
/// side at a time: the cursor waits for the block in flight before it reads on. Reading ahead
/// starts with the second block asked for, so a short read (`vt show`) never pays for a block
/// it does not use; or with the first, when the cursor's last sequence lies past it.
final class BlockReadAhead: @unchecked Sendable {
    struct Block {
        let header: BlockHeader
        let offset: Int64
        let decoded: Result<SealedBlock, DamageReason>
    }

    let scanner: BlockFileScanner
    private let decompressor: ZstdDecompressor
    private let payloadCodec: (any BlockPayloadCodec)?
    /// Its own decompressor for the other thread: a zstd context is not shared.
    private let aheadDecompressor = ZstdDecompressor()
    private var inFlight: DispatchSemaphore?
    private var ahead: Result<Block?, any Error> = .success(nil)
    private var blocksHandedOut = 0
    /// No block past this one is read ahead (the cursor's last sequence); and none at all when
    /// the file system wants its calls in one order.
    private let lastWanted: UInt64?
    private let readsAhead: Bool

    /// The reader's cache, which may hold a block a head's lookup has just decoded.
    private let headers: BlockHeaderCache?

    init(
        scanner: BlockFileScanner, decompressor: ZstdDecompressor, payloadCodec: (any BlockPayloadCodec)?, lastWanted: UInt64?,
        readsAhead: Bool, headers: BlockHeaderCache?
    ) {
        self.scanner = scanner
        self.decompressor = decompressor
        self.payloadCodec = payloadCodec
        self.lastWanted = lastWanted
        self.readsAhead = readsAhead
        self.headers = headers
    }

    var path: String { scanner.path }

    /// The next block (checked, decoded or with its damage), or nil after the last one.
    /// `expectChain`/`expectTime` are what the file's first block must start from.
    func next(expectChain: ChainHash?, expectTime: Int64?) throws -> Block? {
        let block: Block?
        if let inFlight {
            inFlight.wait()
            self.inFlight = nil
            block = try ahead.get()
        } else if let identity = scanner.identity, let headers,
            let decoded = headers.takeHandedOver(at: scanner.position, of: scanner.path, identity: identity)
        {
            let offset = scanner.position
            try scanner.step(overDecoded: decoded.header, at: offset, expectChain: expectChain, expectTime: expectTime)
            block = Block(header: decoded.header, offset: offset, decoded: .success(decoded))
        } else {
            block = try read(expectChain: expectChain, expectTime: expectTime, with: decompressor)
        }
        blocksHandedOut += 1
        // A bounded read whose bound lies past this block will ask for the next one: it is read
        // ahead from the first block on (a time travel's replay from its snapshot, most often
        // two blocks). An open-ended read waits for its second block, so that a short read
        // never pays for a block it does not use.
        let wantsNext = lastWanted.map { scanner.nextSequence <= $0 } ?? (blocksHandedOut >= 2)
        if readsAhead, block != nil, wantsNext, scanner.blocksRead < Int(scanner.header.blockCount) {
            startReadingAhead()
        }
        return block
    }

    /// What the scanner knows once the file is read to its end.
    var chain: ChainHash? { scanner.chain }
    var time: Int64? { scanner.time }
    var nextSequence: UInt64 { scanner.nextSequence }

    private func startReadingAhead() {
        let done = DispatchSemaphore(value: 0)
        inFlight = done
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            ahead = Result { try read(expectChain: nil, expectTime: nil, with: aheadDecompressor) }
            done.signal()
        }
    }

    private func read(expectChain: ChainHash?, expectTime: Int64?, with decompressor: ZstdDecompressor) throws -> Block? {
        guard let raw = try scanner.next(expectChain: expectChain, expectTime: expectTime) else { return nil }
        return Block(
            header: raw.header, offset: raw.offset,
            decoded: SealedBlock.decode(raw.header, stored: raw.stored, decompressor: decompressor, payloadCodec: payloadCodec))
    }

    /// Waits for the block in flight, so nothing reads the file once the cursor has left it.
    func finish() {
        inFlight?.wait()
        inFlight = nil
    }
}
