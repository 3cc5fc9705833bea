/// The 116-byte header in front of every sealed block (FORMAT.md, "Block").
public struct BlockHeader: Equatable, Sendable {
    public var codec: LogFormat.Codec
    public var layout: LogFormat.Layout
    public var hasErasures: Bool
    public var firstSequence: UInt64
    public var eventCount: UInt32
    public var storedLength: UInt32
    public var rawLength: UInt32
    public var timeBefore: Int64
    public var lastTime: Int64
    public var chainBefore: ChainHash
    public var chainAfter: ChainHash
    public var payloadCRC: UInt32

    public var lastSequence: UInt64 { firstSequence + UInt64(eventCount) - 1 }
    /// Header and stored payload: the block's size on disk.
    public var totalSize: Int { LogFormat.blockHeaderSize + Int(storedLength) }

    /// The header's bytes, both checksums included (`payloadCRC` must already be set).
    func encoded() -> [UInt8] {
        var bytes = LogFormat.blockMagic
        bytes.append(LogFormat.blockVersion)
        bytes.append(codec.rawValue)
        bytes.append(layout.rawValue)
        bytes.append(hasErasures ? LogFormat.blockFlagErased : 0)
        bytes.appendLittleEndian(firstSequence)
        bytes.appendLittleEndian(eventCount)
        bytes.appendLittleEndian(storedLength)
        bytes.appendLittleEndian(rawLength)
        bytes.appendLittleEndian(timeBefore)
        bytes.appendLittleEndian(lastTime)
        bytes.append(contentsOf: chainBefore.bytes)
        bytes.append(contentsOf: chainAfter.bytes)
        bytes.appendLittleEndian(payloadCRC)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == LogFormat.blockHeaderSize)
        return bytes
    }

    /// Reads and checks the header at the start of `bytes` (at least 116 of them). Every
    /// failure is corruption in a block file, which a crash cannot tear.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<BlockHeader, DamageReason> {
        guard bytes.count >= LogFormat.blockHeaderSize else {
            return .failure(DamageReason("an incomplete block header (\(bytes.count) of \(LogFormat.blockHeaderSize) bytes)"))
        }
        guard bytes[0..<4].elementsEqual(LogFormat.blockMagic) else {
            return .failure(DamageReason("no block header (the bytes are not VTBK)"))
        }
        let crcOffset = LogFormat.blockHeaderCRCOffset
        guard UInt32(littleEndianBytes: bytes, at: crcOffset) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<crcOffset])) else {
            return .failure(DamageReason("a block header that fails its checksum"))
        }
        guard bytes[4] == LogFormat.blockVersion else {
            return .failure(DamageReason("a block of format version \(bytes[4])"))
        }
        guard let codec = LogFormat.Codec(rawValue: bytes[5]) else {
            return .failure(DamageReason("a block with an unknown codec \(bytes[5])"))
        }
        guard let layout = LogFormat.Layout(rawValue: bytes[6]) else {
            return .failure(DamageReason("a block with an unknown layout \(bytes[6])"))
        }
        guard bytes[7] & ~LogFormat.blockFlagErased == 0 else {
            return .failure(DamageReason("a block with unknown flags \(bytes[7])"))
        }
        func hash(_ offset: Int) -> ChainHash { ChainHash(bytes: Array(bytes[offset..<offset + 32])) }
        let header = BlockHeader(
            codec: codec, layout: layout, hasErasures: bytes[7] & LogFormat.blockFlagErased != 0,
            firstSequence: UInt64(littleEndianBytes: bytes, at: LogFormat.blockFirstSequenceOffset),
            eventCount: UInt32(littleEndianBytes: bytes, at: LogFormat.blockEventCountOffset),
            storedLength: UInt32(littleEndianBytes: bytes, at: LogFormat.blockStoredLengthOffset),
            rawLength: UInt32(littleEndianBytes: bytes, at: LogFormat.blockRawLengthOffset),
            timeBefore: Int64(littleEndianBytes: bytes, at: LogFormat.blockTimeBeforeOffset),
            lastTime: Int64(littleEndianBytes: bytes, at: LogFormat.blockLastTimeOffset),
            chainBefore: hash(LogFormat.blockChainBeforeOffset), chainAfter: hash(LogFormat.blockChainAfterOffset),
            payloadCRC: UInt32(littleEndianBytes: bytes, at: LogFormat.blockPayloadCRCOffset))
        if let problem = header.fieldProblem { return .failure(DamageReason("a block header with \(problem)")) }
        return .success(header)
    }

    private var fieldProblem: String? {
        if firstSequence == 0 { return "sequence 0" }
        if eventCount == 0 { return "no events" }
        if firstSequence > UInt64.max - UInt64(eventCount) { return "sequence numbers past 2^64" }
        if rawLength > LogFormat.maxRawLength { return "a raw length of \(rawLength) bytes, over the 64 MiB limit" }
        if codec == .raw, storedLength != rawLength { return "a raw payload whose stored and raw lengths differ" }
        if codec == .fieldColumns, layout != .columns { return "field columns in the rows layout" }
        if lastTime < timeBefore { return "a last time before the time it counts from" }
        return nil
    }
}

/// A sealed block whose payload was checked, decompressed and parsed (FORMAT.md, "Block").
///
/// ```swift
/// let block = try SealedBlock.decode(header, stored: payload, decompressor: zstd).get()
/// for event in block.events { … }
/// ```
public struct SealedBlock: Sendable {
    public let header: BlockHeader
    let run: EventRun

    /// Checks the stored payload against its CRC, decompresses it and parses every event.
    /// Any failure is corruption: block files are written whole before they are named.
    /// A codec-2 block needs the payload codec it was written with (``BlockPayloadCodec``).
    public static func decode(
        _ header: BlockHeader, stored: UnsafeRawBufferPointer, decompressor: ZstdDecompressor,
        payloadCodec: (any BlockPayloadCodec)?
    ) -> Result<SealedBlock, DamageReason> {
        guard stored.count == Int(header.storedLength) else {
            return .failure(DamageReason("an incomplete block (\(stored.count) of \(header.storedLength) payload bytes)"))
        }
        guard CRC32C.checksum(stored) == header.payloadCRC else {
            return .failure(DamageReason("a block whose payload fails its checksum"))
        }
        let raw: [UInt8]
        switch header.codec {
        case .raw:
            raw = Array(stored)
        case .zstd:
            switch decompressor.decompressSingleFrame(stored, maxRawLength: LogFormat.maxRawLength) {
            case .success(let output): raw = output
            case .failure(let reason): return .failure(DamageReason("a block whose \(reason)"))
            }
            guard raw.count == Int(header.rawLength) else {
                return .failure(DamageReason("a block whose zstd frame holds \(raw.count) bytes, not \(header.rawLength)"))
            }
        case .fieldColumns:
            guard let payloadCodec else {
                return .failure(DamageReason(
                    "a block in codec 2 (the payloads' field columns), read without the payload codec it was written with"
                        + " (read the log through its app, or give the reader its codec)"))
            }
            let rebuilt = decompressor.withSingleFrame(stored, maxRawLength: LogFormat.maxRawLength) { form in
                payloadCodec.rebuild(form, count: Int(header.eventCount), rawLength: Int(header.rawLength))
            }
            switch rebuilt {
            case .success(let output): raw = output
            case .failure(let reason): return .failure(DamageReason("a block whose \(reason)"))
            }
        }
        let parsed = EventRun.parse(
            raw, layout: header.layout, count: Int(header.eventCount), timeBefore: header.timeBefore,
            hasErasures: header.hasErasures)
        switch parsed {
        case .failure(let reason):
            return .failure(DamageReason("a block whose events do not parse: \(reason)"))
        case .success(let run):
            guard run.lastTime == header.lastTime else {
                return .failure(DamageReason("a block whose events end at time \(run.lastTime), not at its last time \(header.lastTime)"))
            }
            return .success(SealedBlock(header: header, run: run))
        }
    }

    /// Every event, in order; an erased event's payload is its 32-byte digest and what was kept.
    public var events: [LogEvent] {
        var iterator = run.makeIterator(firstSequence: header.firstSequence)
        var events: [LogEvent] = []
        events.reserveCapacity(run.count)
        while let event = iterator.next() { events.append(event) }
        return events
    }

    /// Sequence numbers of the erased events.
    public var erasedSequences: [UInt64] { run.erased.map { header.firstSequence + UInt64($0) } }

    /// Rehashes every event from `chainBefore` and says whether it ends at `chainAfter`
    /// (`verify`'s check; readers check only the links between blocks).
    public func chainHolds() -> Bool { rehash(reporting: []).head == header.chainAfter }

    /// Hashes every event from `chainBefore`: the head after the last, and the heads after
    /// each of `sequences` (ascending, each in the block or the one just before it).
    func rehash(reporting sequences: [UInt64]) -> (head: ChainHash, reported: [ChainHash]) {
        var chain = EventChain(head: header.chainBefore, after: header.firstSequence - 1)
        var reported: [ChainHash] = []
        var wanted = sequences.makeIterator()
        var next = wanted.next()
        func report() {
            while let sequence = next, sequence == chain.sequence {
                reported.append(chain.head)
                next = wanted.next()
            }
        }
        report()
        var iterator = run.makeIterator(firstSequence: header.firstSequence)
        while let event = iterator.next() {
            if iterator.isErased {
                event.payload.prefix(LogFormat.digestSize).withUnsafeBytes { chain.append(time: event.timestamp, digest: $0) }
            } else {
                chain.append(time: event.timestamp, payload: event.payload)
            }
            report()
        }
        return (chain.head, reported)
    }
}

/// Gathers events into one sealed block and encodes it, computing the chain as it goes.
///
/// ```swift
/// var builder = BlockBuilder(firstSequence: 1, timeBefore: LogFormat.timeBeforeFirstEvent, chainBefore: anchor)
/// builder.add(payload, at: time)
/// let header = builder.encode(layout: .columns, compressor: zstd, into: &file)
/// ```
public struct BlockBuilder {
    public let firstSequence: UInt64
    public let timeBefore: Int64
    public let chainBefore: ChainHash
    private var chain: EventChain
    private var times: [Int64] = []
    private var payloads: [ArraySlice<UInt8>] = []
    private var erased: [Int] = []
    public private(set) var rawPayloadBytes = 0
    /// False when the caller hashes the events of the encoded block instead (compaction:
    /// `BlockFileWriter`'s `chainFromBlocks`); the header's `chainAfter` is then a placeholder.
    private let hashesEvents: Bool

    public init(firstSequence: UInt64, timeBefore: Int64, chainBefore: ChainHash) {
        self.init(firstSequence: firstSequence, timeBefore: timeBefore, chainBefore: chainBefore, hashesEvents: true)
    }

    init(firstSequence: UInt64, timeBefore: Int64, chainBefore: ChainHash, hashesEvents: Bool) {
        precondition(firstSequence >= 1)
        self.firstSequence = firstSequence
        self.timeBefore = timeBefore
        self.chainBefore = chainBefore
        self.chain = EventChain(head: chainBefore, after: firstSequence - 1)
        self.hashesEvents = hashesEvents
    }

    public var count: Int { times.count }
    public var lastTime: Int64 { times.last ?? timeBefore }
    /// The chain's head after the events added so far.
    public var chainAfter: ChainHash { chain.head }

    public mutating func add(_ payload: ArraySlice<UInt8>, at time: Int64) {
        precondition(time >= lastTime, "times must not decrease")
        if hashesEvents { chain.append(time: LogTimestamp(microsecondsSinceEpoch: time), payload: payload) }
        times.append(time)
        payloads.append(payload)
        rawPayloadBytes += payload.count
    }

    /// Adds an event whose payload was erased: only its digest stays, with at most
    /// ``LogFormat/maxErasedKept`` bytes the caller keeps (FORMAT.md, "Erased events").
    public mutating func addErased(digest: [UInt8], kept: [UInt8] = [], at time: Int64) {
        precondition(time >= lastTime && digest.count == LogFormat.digestSize && kept.count <= LogFormat.maxErasedKept)
        if hashesEvents { digest.withUnsafeBytes { chain.append(time: LogTimestamp(microsecondsSinceEpoch: time), digest: $0) } }
        erased.append(times.count)
        times.append(time)
        payloads.append((digest + kept)[...])
        rawPayloadBytes += digest.count + kept.count
    }

    /// Appends the block (header, then payload) to `output` and returns its header. zstd is
    /// used only when it makes the payload smaller; with a `payloadCodec` (columns layout only)
    /// it compresses the payloads in the codec's form (codec 2) when that is smaller still.
    @discardableResult
    public func encode(
        layout: LogFormat.Layout, compressor: ZstdCompressor?, payloadCodec: (any BlockPayloadCodec)? = nil,
        into output: inout [UInt8]
    ) -> BlockHeader {
        var scratch = BlockScratch(payloadCodec: payloadCodec)
        return encode(layout: layout, compressor: compressor, scratch: &scratch, into: &output)
    }

    /// ``encode(layout:compressor:payloadCodec:into:)`` with buffers, and the payload codec's
    /// encoder, that a writer keeps from block to block.
    @discardableResult
    public func encode(
        layout: LogFormat.Layout, compressor: ZstdCompressor?, scratch: inout BlockScratch, into output: inout [UInt8]
    ) -> BlockHeader {
        precondition(!times.isEmpty)
        // Taken out of `scratch` (an O(1) swap) so that each can be used beside the others.
        var raw = scratch.take(\.raw), compressed = scratch.take(\.compressed)
        defer {
            scratch.raw = raw
            scratch.compressed = compressed
        }
        let tryFieldColumns = compressor != nil && scratch.fields != nil && layout == .columns
        raw.reserveCapacity(tryFieldColumns ? 16 + 4 * times.count : rawPayloadBytes + 6 * times.count)
        if !erased.isEmpty {
            raw.appendVarint(UInt64(erased.count))
            var previous = 0
            for (index, position) in erased.enumerated() {
                raw.appendVarint(UInt64(index == 0 ? position : position - previous))
                previous = position
            }
        }
        var codec = LogFormat.Codec.raw
        let rawLength: Int
        if tryFieldColumns, let compressor {
            // Codec 2 needs only the raw payload's head (erasures, times) and its length: the
            // lengths and payloads are written out only if the field form does not pay.
            raw.appendTimeDeltas(times, timeBefore: timeBefore)
            let head = raw.count
            rawLength = head + payloads.reduce(0) { $0 + UInt64($1.count).varintSize } + rawPayloadBytes
            precondition(rawLength <= LogFormat.maxRawLength, "a block holds at most 64 MiB of raw events")
            var form = scratch.take(\.form), columns = scratch.take(\.columns)
            defer {
                scratch.form = form
                scratch.columns = columns
            }
            scratch.fields!.reset()
            for payload in payloads { scratch.fields!.add(payload) }
            if scratch.fields!.finish(head: raw, into: &form, scratch: &columns), form.count <= LogFormat.maxRawLength,
                form.withUnsafeBytes({ compressor.compress($0, appendingTo: &compressed) }) != nil,
                compressed.count < rawLength
            {
                codec = .fieldColumns
            } else {
                compressed.removeAll(keepingCapacity: true)
                raw.appendLengthsAndPayloads(payloads)
            }
        } else {
            raw.appendEvents(times: times, payloads: payloads, layout: layout, timeBefore: timeBefore)
            rawLength = raw.count
            precondition(rawLength <= LogFormat.maxRawLength, "a block holds at most 64 MiB of raw events")
        }
        if codec == .raw, let compressor, raw.withUnsafeBytes({ compressor.compress($0, appendingTo: &compressed) }) != nil,
            compressed.count < raw.count
        {
            codec = .zstd
        }
        let storedLength = codec == .raw ? raw.count : compressed.count
        let header = BlockHeader(
            codec: codec, layout: layout, hasErasures: !erased.isEmpty, firstSequence: firstSequence,
            eventCount: UInt32(times.count), storedLength: UInt32(storedLength), rawLength: UInt32(rawLength),
            timeBefore: timeBefore, lastTime: lastTime, chainBefore: chainBefore, chainAfter: chain.head,
            payloadCRC: codec == .raw ? CRC32C.checksum(raw) : CRC32C.checksum(compressed))
        output.append(contentsOf: header.encoded())
        output.append(contentsOf: codec == .raw ? raw : compressed)
        return header
    }
}

/// Buffers a block writer keeps from block to block: a block's raw payload, its codec form
/// and its compressed form each take about a MiB, and fresh ones cost a page fault every 4 KiB.
/// With a payload codec, its encoder too (nil: codecs 0 and 1 only).
public struct BlockScratch {
    fileprivate var raw: [UInt8] = []
    fileprivate var compressed: [UInt8] = []
    fileprivate var form: [UInt8] = []
    fileprivate var columns: [UInt8] = []
    fileprivate var fields: (any BlockPayloadEncoder)?

    public init(payloadCodec: (any BlockPayloadCodec)? = nil) {
        fields = payloadCodec?.makeEncoder()
    }

    /// The buffer at `path`, emptied with its capacity kept, leaving an empty one in its place.
    fileprivate mutating func take(_ path: WritableKeyPath<BlockScratch, [UInt8]>) -> [UInt8] {
        var buffer: [UInt8] = []
        swap(&buffer, &self[keyPath: path])
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }
}
