import Crypto
@testable import EventLog
import FieldColumns
import Testing

/// Sealed blocks (FORMAT.md, "Block file" and "Erased events"): both layouts, both codecs,
/// erased events, the chain they carry, and damage anywhere in them.
@Suite struct Format2BlockTests {
    typealias Event = (time: Int64, payload: [UInt8])

    static func block(
        _ events: [Event], layout: LogFormat.Layout, compress: Bool, erase: Set<Int> = [], firstSequence: UInt64 = 1,
        timeBefore: Int64 = LogFormat.timeBeforeFirstEvent, chainBefore: ChainHash? = nil
    ) -> (bytes: [UInt8], header: BlockHeader) {
        var builder = BlockBuilder(
            firstSequence: firstSequence, timeBefore: timeBefore,
            chainBefore: chainBefore ?? EventChain.anchor(logID: Format2CodecTests.logID))
        for (index, event) in events.enumerated() {
            if erase.contains(index) {
                let digest = event.payload.withUnsafeBytes { EventChain.digest(of: $0) }
                builder.addErased(digest: digest, kept: Self.kept(index), at: event.time)
            } else {
                builder.add(event.payload[...], at: event.time)
            }
        }
        var bytes: [UInt8] = []
        let header = builder.encode(layout: layout, compressor: compress ? try! ZstdCompressor(level: 3) : nil, into: &bytes)
        return (bytes, header)
    }

    /// What an erased event at `index` keeps in these tests: nothing, one byte, or the most allowed.
    static func kept(_ index: Int) -> [UInt8] {
        switch index % 3 {
        case 0: []
        case 1: [UInt8(truncatingIfNeeded: index)]
        default: (0..<LogFormat.maxErasedKept).map { UInt8(truncatingIfNeeded: index &+ $0) }
        }
    }

    static func decode(_ bytes: [UInt8]) -> Result<SealedBlock, DamageReason> {
        bytes.withUnsafeBytes { raw in
            switch BlockHeader.decode(raw) {
            case .failure(let reason): return .failure(reason)
            case .success(let header):
                let stored = UnsafeRawBufferPointer(rebasing: raw[min(raw.count, LogFormat.blockHeaderSize)...])
                // The codec-2 tests decode their blocks here too.
                return SealedBlock.decode(header, stored: stored, decompressor: ZstdDecompressor(), payloadCodec: FieldColumnsCodec())
            }
        }
    }

    @Test(arguments: LogFormat.Layout.allCases, [false, true])
    func blocksRoundTripWithTheChainOfTheirEvents(_ layout: LogFormat.Layout, _ compress: Bool) throws {
        let events = Format2CodecTests.events(300, compressible: true)
        let (bytes, header) = Self.block(events, layout: layout, compress: compress)
        #expect(header.codec == (compress ? .zstd : .raw))
        #expect(header.layout == layout)
        let block = try Self.decode(bytes).get()
        #expect(block.header == header)
        #expect(block.events.map(\.sequence) == Array(1...300))
        #expect(block.events.map(\.timestamp.microsecondsSinceEpoch) == events.map(\.time))
        #expect(block.events.map { Array($0.payload) } == events.map(\.payload))
        #expect(block.chainHolds())
        #expect(header.chainAfter.bytes == Format2CodecTests.independentHead(events, logID: Format2CodecTests.logID))
    }

    /// The chain's head after N events does not depend on how the events are grouped.
    @Test(arguments: [1, 7, 64, 500])
    func theHeadAfterAnEventIsTheSameWhateverTheBlockSize(_ blockSize: Int) throws {
        let events = Format2CodecTests.events(500, seed: 3)
        var chainBefore = EventChain.anchor(logID: Format2CodecTests.logID)
        var timeBefore = LogFormat.timeBeforeFirstEvent
        var start = 0
        var links: [(ChainHash, ChainHash)] = []
        while start < events.count {
            let slice = Array(events[start..<min(events.count, start + blockSize)])
            let (bytes, header) = Self.block(
                slice, layout: .columns, compress: true, firstSequence: UInt64(start + 1), timeBefore: timeBefore,
                chainBefore: chainBefore)
            #expect(try Self.decode(bytes).get().chainHolds())
            links.append((header.chainBefore, header.chainAfter))
            chainBefore = header.chainAfter
            timeBefore = header.lastTime
            start += slice.count
        }
        #expect(chainBefore.bytes == Format2CodecTests.independentHead(events, logID: Format2CodecTests.logID))
        // Each block's chain_before is the previous one's chain_after: the readers' cheap check.
        #expect(zip(links, links.dropFirst()).allSatisfy { $0.1 == $1.0 })
    }

    @Test(arguments: LogFormat.Layout.allCases)
    func erasedEventsKeepTheirDigestAndTheChain(_ layout: LogFormat.Layout) throws {
        let events = Format2CodecTests.events(50, seed: 9)
        let erased: Set<Int> = [0, 1, 17, 49]
        let (whole, wholeHeader) = Self.block(events, layout: layout, compress: true)
        let (bytes, header) = Self.block(events, layout: layout, compress: true, erase: erased)
        #expect(header.hasErasures)
        #expect(header.chainAfter == wholeHeader.chainAfter)
        let block = try Self.decode(bytes).get()
        #expect(block.chainHolds())
        #expect(block.erasedSequences == erased.sorted().map { UInt64($0 + 1) })
        for (index, event) in block.events.enumerated() {
            let expected = erased.contains(index)
                ? Array(SHA256.hash(data: events[index].payload)) + Self.kept(index) : events[index].payload
            #expect(Array(event.payload) == expected, "event \(index)")
            #expect(event.isErased == erased.contains(index))
            #expect(event.keptBytes.map(Array.init) == (erased.contains(index) ? Self.kept(index) : nil))
        }
        #expect(try Self.decode(whole).get().erasedSequences.isEmpty)
    }

    @Test(arguments: LogFormat.Layout.allCases, [false, true])
    func everyFlippedByteOfABlockIsDetected(_ layout: LogFormat.Layout, _ compress: Bool) {
        let (bytes, _) = Self.block(Format2CodecTests.events(40, seed: 5), layout: layout, compress: compress)
        for offset in bytes.indices {
            var flipped = bytes
            flipped[offset] ^= 0x10
            if case .success = Self.decode(flipped) { Issue.record("a flip at offset \(offset) was not detected") }
        }
    }

    @Test func blocksThatBreakARuleAreRefusedWithTheRuleNamed() throws {
        let (bytes, _) = Self.block(Format2CodecTests.events(10), layout: .columns, compress: false)
        /// Rewrites a header field and both checksums, so only the rule can refuse it.
        func with(_ change: (inout [UInt8]) -> Void, payload: (([UInt8]) -> [UInt8])? = nil) -> [UInt8] {
            var header = Array(bytes.prefix(LogFormat.blockHeaderSize))
            var stored = Array(bytes.dropFirst(LogFormat.blockHeaderSize))
            if let payload { stored = payload(stored) }
            change(&header)
            header.setLittleEndian(CRC32C.checksum(stored), at: LogFormat.blockPayloadCRCOffset)
            header.setLittleEndian(CRC32C.checksum(header[0..<LogFormat.blockHeaderCRCOffset]), at: LogFormat.blockHeaderCRCOffset)
            return header + stored
        }
        let cases: [(String, [UInt8])] = [
            ("unknown codec", with { $0[5] = 7 }),
            ("unknown layout", with { $0[6] = 2 }),
            ("unknown flags", with { $0[7] = 0x02 }),
            ("no events", with { $0.setLittleEndian(UInt32(0), at: LogFormat.blockEventCountOffset) }),
            ("more events than stored", with { $0.setLittleEndian(UInt32(11), at: LogFormat.blockEventCountOffset) }),
            ("last time before", with { $0.setLittleEndian(Int64.min, at: LogFormat.blockLastTimeOffset) }),
            ("wrong last time", with { $0.setLittleEndian(Int64(5), at: LogFormat.blockLastTimeOffset) }),
            ("raw length over 64 MiB", with { $0.setLittleEndian(UInt32(LogFormat.maxRawLength + 1), at: LogFormat.blockRawLengthOffset) }),
            ("stored ≠ raw with codec 0", with({ $0.setLittleEndian(UInt32(bytes.count - LogFormat.blockHeaderSize + 1), at: LogFormat.blockStoredLengthOffset) }, payload: { $0 + [0] })),
            ("sequence 0", with { $0.setLittleEndian(UInt64(0), at: LogFormat.blockFirstSequenceOffset) }),
            ("bytes after the last payload", with({ $0.setLittleEndian(UInt32(bytes.count - LogFormat.blockHeaderSize + 1), at: LogFormat.blockStoredLengthOffset); $0.setLittleEndian(UInt32(bytes.count - LogFormat.blockHeaderSize + 1), at: LogFormat.blockRawLengthOffset) }, payload: { $0 + [0] })),
        ]
        for (name, block) in cases {
            guard case .failure(let reason) = Self.decode(block) else { Issue.record("\(name) was accepted"); continue }
            #expect(!reason.description.isEmpty, "\(name)")
        }
    }

    /// The reader written from FORMAT.md's tables alone (``IndependentFormat2``) decodes blocks
    /// of both layouts and codecs, with erased events, and recomputes their chain_after.
    @Test(arguments: LogFormat.Layout.allCases, [false, true])
    func anIndependentReaderDecodesBlocksWithErasuresFromTheDocumentsTables(_ layout: LogFormat.Layout, _ compress: Bool) throws {
        let events = Format2CodecTests.events(20, seed: 11, compressible: compress)
        // Erased events too: an erasure list, and digests (with 0, 1 and 16 kept bytes) in place of three payloads.
        let erased: Set<Int> = [0, 7, 8]
        let (bytes, header) = Self.block(events, layout: layout, compress: compress, erase: erased)
        let block = try IndependentFormat2.block(bytes, at: 0)
        #expect(block.codec == header.codec.rawValue && block.layout == layout.rawValue && block.flags == 1)
        #expect(block.end == bytes.count)
        #expect(block.events.map(\.time) == events.map(\.time))
        #expect(Set(block.events.indices.filter { block.events[$0].erased }) == erased)
        #expect(block.events.map(\.payload) == events.enumerated().map {
            erased.contains($0.offset) ? Array(SHA256.hash(data: $0.element.payload)) + Self.kept($0.offset) : $0.element.payload
        })
        #expect(block.lastTime == events.last!.time)
        let head = block.events.reduce(block.chainBefore) { head, event in
            IndependentFormat2.step(head, IndependentFormat2.leaf(sequence: event.sequence, time: event.time, digest: IndependentFormat2.digest(event)))
        }
        #expect(head == block.chainAfter)
    }
}
