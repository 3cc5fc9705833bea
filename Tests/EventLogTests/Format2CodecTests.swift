import Crypto
@testable import EventLog
import SeededRandom
import Testing

/// Format 2's pieces (FORMAT.md, part "Format 2"): the event chain, hot-tail records and sealed
/// blocks, each checked against an independent computation written from the document's tables.
@Suite struct Format2CodecTests {
    static let logID: [UInt8] = Array(0..<16)

    /// Events with growing, sometimes equal times; the first counts from −2^63.
    /// `compressible` payloads repeat a few words, so zstd shrinks them; others are random.
    static func events(_ count: Int, seed: UInt64 = 1, compressible: Bool = false) -> [(time: Int64, payload: [UInt8])] {
        var generator = SplitMix(seed: seed)
        var time: Int64 = 1_700_000_000_000_000
        let words = ["pin", "photo", "album", "harbour", "sunset"].map { Array($0.utf8) }
        return (0..<count).map { index in
            time += Int64.random(in: 0...2_000, using: &generator)
            let length = index % 17 == 0 ? 700 : Int.random(in: 0...120, using: &generator)
            var payload: [UInt8] = []
            while payload.count < length {
                payload += compressible
                    ? words[Int.random(in: 0..<words.count, using: &generator)]
                    : [UInt8.random(in: 0...255, using: &generator)]
            }
            return (time, Array(payload.prefix(length)))
        }
    }

    // MARK: The event chain

    /// The chain as FORMAT.md writes it, with plain byte arrays and swift-crypto.
    static func independentHead(_ events: [(time: Int64, payload: [UInt8])], logID: [UInt8]) -> [UInt8] {
        func sha(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        var head = sha([0x02] + Array("VTLOG2".utf8) + logID + le(UInt64(0)) + [UInt8](repeating: 0, count: 32))
        for (index, event) in events.enumerated() {
            let leaf = sha([0x00] + le(UInt64(index + 1)) + le(event.time) + sha(event.payload))
            head = sha([0x01] + head + leaf)
        }
        return head
    }

    @Test(arguments: [0, 1, 2, 100])
    func chainMatchesTheDocumentsDefinition(_ count: Int) {
        let events = Self.events(count)
        var chain = EventChain(head: EventChain.anchor(logID: Self.logID))
        for event in events { chain.append(time: LogTimestamp(microsecondsSinceEpoch: event.time), payload: event.payload[...]) }
        #expect(chain.sequence == UInt64(count))
        #expect(chain.head.bytes == Self.independentHead(events, logID: Self.logID))
    }

    @Test func chainCoversSequenceTimeAndPayloadAndTheAnchorCoversTheOrigin() {
        let base = EventChain(head: EventChain.anchor(logID: Self.logID))
        var one = base
        one.append(time: LogTimestamp(microsecondsSinceEpoch: 5), payload: [1, 2, 3][...])
        var otherTime = base
        otherTime.append(time: LogTimestamp(microsecondsSinceEpoch: 6), payload: [1, 2, 3][...])
        var otherPayload = base
        otherPayload.append(time: LogTimestamp(microsecondsSinceEpoch: 5), payload: [1, 2, 4][...])
        var otherSequence = EventChain(head: base.head, after: 7)
        otherSequence.append(time: LogTimestamp(microsecondsSinceEpoch: 5), payload: [1, 2, 3][...])
        let heads = [one.head, otherTime.head, otherPayload.head, otherSequence.head]
        #expect(Set(heads).count == 4)
        // Hashing the digest gives the same step as hashing the payload: what erasure relies on.
        var fromDigest = base
        [UInt8]([1, 2, 3]).withUnsafeBytes { EventChain.digest(of: $0) }
            .withUnsafeBytes { fromDigest.append(time: LogTimestamp(microsecondsSinceEpoch: 5), digest: $0) }
        #expect(fromDigest == one)
        let upgraded = EventChain.anchor(logID: Self.logID, originSequence: 9, originHash: one.head)
        #expect(upgraded != base.head)
        #expect(upgraded != EventChain.anchor(logID: Self.logID, originSequence: 10, originHash: one.head))
    }

    // MARK: Hot-tail records

    static func encodeRecords(_ events: [(time: Int64, payload: [UInt8])], sizes: [Int], compress: Bool) -> [UInt8] {
        let compressor = compress ? try! ZstdCompressor(level: 3) : nil
        var builder = TailRecordBuilder()
        var output: [UInt8] = []
        var time = LogFormat.timeBeforeFirstEvent
        var start = 0
        var size = 0
        while start < events.count {
            let count = min(sizes[size % sizes.count], events.count - start)
            size += 1
            builder.reset(timeBefore: time)
            for event in events[start..<start + count] { builder.add(event.payload, at: event.time) }
            builder.encode(compressor: compressor, into: &output)
            time = builder.lastTime
            start += count
        }
        return output
    }

    static func readRecords(_ bytes: [UInt8]) -> (events: [LogEvent], stop: TailRecord.Read?) {
        let decompressor = ZstdDecompressor()
        var events: [LogEvent] = []
        var position = 0
        var time = LogFormat.timeBeforeFirstEvent
        while true {
            let read = bytes.withUnsafeBytes {
                TailRecord.read(UnsafeRawBufferPointer(rebasing: $0[position...]), timeBefore: time, decompressor: decompressor)
            }
            guard case .record(let record) = read else { return (events, read) }
            events += record.events(firstSequence: UInt64(events.count + 1))
            time = record.lastTime
            position += record.size
        }
    }

    @Test(arguments: [[1], [3], [1, 2, 40]], [false, true])
    func recordsRoundTripAndCostAtMostEightBytesOfFraming(_ sizes: [Int], _ compress: Bool) {
        let events = Self.events(120)
        let bytes = Self.encodeRecords(events, sizes: sizes, compress: compress)
        let (read, stop) = Self.readRecords(bytes)
        guard case .end = stop else { Issue.record("stopped with \(String(describing: stop))"); return }
        #expect(read.map(\.sequence) == Array(1...120))
        #expect(read.map(\.timestamp.microsecondsSinceEpoch) == events.map(\.time))
        #expect(read.map { Array($0.payload) } == events.map(\.payload))
        if sizes == [1], !compress {
            // Framing: at most 8 bytes a record (the event's own delta and length aside).
            var rowBytes = 0
            var previous = LogFormat.timeBeforeFirstEvent
            for event in events {
                var row: [UInt8] = []
                row.appendVarint(UInt64(bitPattern: event.time &- previous))
                row.appendVarint(UInt64(event.payload.count))
                rowBytes += row.count + event.payload.count
                previous = event.time
            }
            #expect(bytes.count - rowBytes <= 8 * events.count)
            #expect(bytes.count - rowBytes >= 5 * events.count)
        }
    }

    @Test func compressibleCommitsAreStoredAsZstdFrames() {
        let payload = [UInt8](repeating: 0x41, count: 4_000)
        var builder = TailRecordBuilder()
        builder.reset(timeBefore: 0)
        builder.add(payload, at: 10)
        var bytes: [UInt8] = []
        let size = builder.encode(compressor: try! ZstdCompressor(level: 3), into: &bytes)
        #expect(size < 100)
        let read = bytes.withUnsafeBytes { TailRecord.read($0, timeBefore: 0, decompressor: ZstdDecompressor()) }
        guard case .record(let record) = read else { Issue.record("\(read)"); return }
        #expect(record.isCompressed)
        #expect(Array(record.events(firstSequence: 1)[0].payload) == payload)
    }

    @Test func everyTruncationOfARecordIsDamageThatATornWriteCanExplain() {
        let bytes = Self.encodeRecords(Self.events(3), sizes: [3], compress: false)
        for length in 1..<bytes.count {
            let read = Array(bytes.prefix(length)).withUnsafeBytes {
                TailRecord.read($0, timeBefore: LogFormat.timeBeforeFirstEvent, decompressor: ZstdDecompressor())
            }
            guard case .damaged(_, let definite) = read else { Issue.record("length \(length): \(read)"); continue }
            #expect(!definite, "length \(length)")
        }
    }

    @Test(arguments: [false, true])
    func everyFlippedByteOfARecordIsDetected(_ compress: Bool) {
        let events = compress ? [(Int64(5), [UInt8](repeating: 7, count: 3_000))] : Self.events(4)
        let bytes = Self.encodeRecords(events, sizes: [4], compress: compress)
        for offset in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var flipped = bytes
                flipped[offset] ^= mask
                let (read, _) = Self.readRecords(flipped)
                #expect(read.isEmpty, "offset \(offset) mask \(mask): a damaged record was accepted")
            }
        }
    }

    @Test func aRecordWhoseChecksumHoldsButWhoseEventsDoNotParseIsCorruption() {
        // Body: delta 0, length 5, but no payload bytes follow; the CRC is right.
        func record(_ body: [UInt8], codec: UInt64 = 0) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.appendVarint(UInt64(body.count) << 1 | codec)
            bytes += body
            bytes.appendLittleEndian(CRC32C.checksum(bytes))
            return bytes
        }
        let cases: [(String, [UInt8], UInt64)] = [
            ("length past the end", [0x00, 0x05], 0),
            ("a malformed varint", [0x80, 0x80], 0),
            ("time past 2^63 − 1", [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00], 0),
            ("not a zstd frame", [0x00, 0x00, 0x01], 1),
        ]
        for (name, body, codec) in cases {
            let read = record(body, codec: codec).withUnsafeBytes {
                TailRecord.read($0, timeBefore: 1, decompressor: ZstdDecompressor())
            }
            guard case .damaged(_, let definite) = read else { Issue.record("\(name): \(read)"); continue }
            #expect(definite, "\(name)")
        }
        // A zstd frame followed by other bytes is refused, though its CRC holds.
        var frame: [UInt8] = []
        var raw: [UInt8] = []
        raw.appendVarint(0)
        raw.appendVarint(3)
        raw += [1, 2, 3]
        _ = raw.withUnsafeBytes { try! ZstdCompressor(level: 1).compress($0, appendingTo: &frame) }
        let trailing = record(frame + [0], codec: 1).withUnsafeBytes {
            TailRecord.read($0, timeBefore: 1, decompressor: ZstdDecompressor())
        }
        guard case .damaged(let reason, true) = trailing else { Issue.record("\(trailing)"); return }
        #expect(reason.contains("followed by 1 other bytes"))
    }

    @Test func aZeroByteOrNothingIsTheEndOfData() {
        for bytes: [UInt8] in [[], [0], [0, 0, 0, 0]] {
            let read = bytes.withUnsafeBytes { TailRecord.read($0, timeBefore: 0, decompressor: ZstdDecompressor()) }
            guard case .end = read else { Issue.record("\(bytes): \(read)"); continue }
        }
    }
}
