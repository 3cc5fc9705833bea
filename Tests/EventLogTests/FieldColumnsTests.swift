@testable import EventLog
@testable import FieldColumns
import SeededRandom
import StorageTestSupport
import Testing

/// Codec 2 (FORMAT.md, "Codec 2: field columns"): payloads taken apart along their protobuf
/// wire format come back byte for byte, whatever they hold; what is not canonical protobuf is
/// kept whole; a damaged field form is refused, never half-read.
@Suite(.heavy) struct FieldColumnsTests {
    /// A protobuf message written by hand, so the tests control every byte.
    struct Proto {
        var bytes: [UInt8] = []
        mutating func tag(_ field: Int, _ wire: Int) { bytes.appendVarint(UInt64(field << 3 | wire)) }
        mutating func varint(_ field: Int, _ value: UInt64) { tag(field, 0); bytes.appendVarint(value) }
        mutating func fixed64(_ field: Int, _ value: UInt64) { tag(field, 1); bytes.appendLittleEndian(value) }
        mutating func fixed32(_ field: Int, _ value: UInt32) { tag(field, 5); bytes.appendLittleEndian(value) }
        mutating func data(_ field: Int, _ value: [UInt8]) { tag(field, 2); bytes.appendVarint(UInt64(value.count)); bytes += value }
        mutating func text(_ field: Int, _ value: String) { data(field, Array(value.utf8)) }
        mutating func message(_ field: Int, _ value: Proto) { data(field, value.bytes) }
    }

    /// The tests' numbers: seeded, the same on every run.
    typealias Random = SplitMix

    /// Payloads shaped like the app's (a listing, then its downloads), with every kind of field.
    static func appLikePayloads(_ count: Int, seed: UInt64 = 7) -> [[UInt8]] {
        var random = Random(seed: seed)
        let words = ["harbour", "old", "town", "sunset", "bridge", "market", "view", "night"]
        var payloads: [[UInt8]] = []
        while payloads.count < count {
            let pin = random.next()
            var listing = Proto()
            listing.fixed64(1, pin)
            listing.varint(2, 1)
            listing.varint(3, 1)
            let photos = 5 + random.below(30)
            for _ in 0..<photos {
                var photo = Proto()
                let id = String(50_000_000_000 + random.next() % 9_000_000_000)
                let secret = String(random.next() % 0xFFFF_FFFF, radix: 16)
                photo.text(1, id)
                photo.text(2, "https://live.staticflickr.com/\(65_535 - random.below(8))/\(id)_\(secret)_q.jpg")
                let title = (0..<random.below(4)).map { _ in words[random.below(words.count)] }.joined(separator: " ")
                if !title.isEmpty { photo.text(3, title) }
                photo.varint(4, 150)
                photo.varint(5, 150)
                listing.message(6, photo)
            }
            var envelope = Proto()
            envelope.varint(1, 1)
            envelope.message(15, listing)
            payloads.append(envelope.bytes)
            for slot in 0..<photos {
                var download = Proto()
                download.fixed64(1, pin)
                download.varint(2, 1)
                download.varint(3, UInt64(slot))
                download.data(4, random.bytes(32))
                download.varint(5, 3_000 + random.next() % 37_000)
                download.text(6, "image/jpeg")
                var envelope = Proto()
                envelope.varint(1, 1)
                envelope.varint(2, UInt64(payloads.count))
                envelope.message(16, download)
                payloads.append(envelope.bytes)
            }
        }
        return Array(payloads.prefix(count))
    }

    /// Payloads at every edge the field form has: kinds that must stay whole, numbers at their
    /// limits, nesting at and past the limit, and bytes that are no protobuf at all.
    static func edgePayloads() -> [[UInt8]] {
        var payloads: [[UInt8]] = [[], [0x08, 0x80, 0x00], [0x0B, 0x0C], [0x08], Array("plain text, no protobuf".utf8)]
        var random = Random(seed: 99)
        for _ in 0..<20 { payloads.append(random.bytes(1 + random.below(80))) }
        for text in [
            "0", "007", "18446744073709551615", "9999999999999999999", "12345678901234567890", "a  b", " a", "a ",
            "deadbeefcafe1234", "deadbeefcafe12345", "abc1", "face", "x0123y", "id 42 and 42", "\u{1}\u{2}\u{3} 5",
            "https://upload.wikimedia.org/wikipedia/commons/thumb/a/ab/File_2019.jpg/320px-File_2019.jpg", "", "ümlaut 12",
        ] {
            var message = Proto()
            message.text(3, text)
            message.text(4, text)
            payloads.append(message.bytes)
        }
        var numbers = Proto()
        numbers.varint(1, UInt64.max)
        numbers.varint(1, 0)
        numbers.fixed64(2, UInt64.max)
        numbers.fixed32(3, UInt32.max)
        numbers.varint(536_870_911, 5)
        payloads.append(numbers.bytes)
        var repeats = Proto()
        repeats.text(1, "123")
        repeats.text(2, "456")
        repeats.text(5, "x123_456_123_789")
        payloads.append(repeats.bytes)
        for depth in [15, 16, 17, 20] {
            var inner = Proto()
            inner.varint(1, UInt64(depth))
            for level in 0..<depth - 1 {
                var outer = Proto()
                outer.varint(2, UInt64(level))
                outer.message(3, inner)
                inner = outer
            }
            payloads.append(inner.bytes)
        }
        return payloads
    }

    static func roundTrip(_ payloads: [[UInt8]]) throws -> (form: [UInt8], head: Int) {
        var encoder = FieldColumnsEncoder()
        for payload in payloads { encoder.add(payload[...]) }
        let head: [UInt8] = [0x01, 0x02, 0x03]
        let form = try #require(encoder.finish(head: head))
        var raw = head
        for payload in payloads { raw.appendVarint(UInt64(payload.count)) }
        for payload in payloads { raw += payload }
        let rebuilt = try form.withUnsafeBytes {
            try FieldColumnsDecoder.rebuild($0, count: payloads.count, rawLength: raw.count).get()
        }
        #expect(rebuilt == raw)
        return (form, raw.count)
    }

    @Test func appLikePayloadsComeBackByteForByte() throws {
        _ = try Self.roundTrip(Self.appLikePayloads(3_000))
    }

    @Test func payloadsAtEveryEdgeComeBackByteForByte() throws {
        let payloads = Self.edgePayloads()
        _ = try Self.roundTrip(payloads)
        for payload in payloads { _ = try Self.roundTrip([payload]) }
    }

    @Test func blocksOfFieldColumnsKeepTheirEventsAndChain() throws {
        let payloads = Self.appLikePayloads(2_000) + Self.edgePayloads()
        let events = payloads.enumerated().map { (time: Int64(1_000 + $0.offset * 7), payload: $0.element) }
        for erase in [Set<Int>(), [0, 5, 17, payloads.count - 1]] {
            var builder = BlockBuilder(
                firstSequence: 1, timeBefore: LogFormat.timeBeforeFirstEvent, chainBefore: EventChain.anchor(logID: Format2CodecTests.logID))
            for (index, event) in events.enumerated() {
                if erase.contains(index) {
                    builder.addErased(digest: event.payload.withUnsafeBytes { EventChain.digest(of: $0) }, kept: [3], at: event.time)
                } else {
                    builder.add(event.payload[...], at: event.time)
                }
            }
            var bytes: [UInt8] = []
            let header = builder.encode(layout: .columns, compressor: try ZstdCompressor(level: 3), payloadCodec: FieldColumnsCodec(), into: &bytes)
            #expect(header.codec == .fieldColumns)
            let block = try Format2BlockTests.decode(bytes).get()
            #expect(block.chainHolds())
            #expect(block.erasedSequences == erase.sorted().map { UInt64($0 + 1) })
            for (index, event) in block.events.enumerated() where !erase.contains(index) {
                #expect(Array(event.payload) == payloads[index])
            }
        }
    }

    /// A writer keeps its buffers from block to block (``BlockScratch``) and a reader its
    /// decompression buffer: nothing of one block may leak into the next. Blocks of other
    /// shapes, sizes and codecs in turn, through one scratch and one decompressor, give the
    /// bytes and events fresh ones give.
    @Test func reusedBuffersGiveWhatFreshOnesGive() throws {
        let compressor = try ZstdCompressor(level: 3)
        let decompressor = ZstdDecompressor()
        var scratch = BlockScratch(payloadCodec: FieldColumnsCodec())
        let opaque: [[UInt8]] = (0..<300).map { index in (0..<(index % 40 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) } }
        let blocks: [[[UInt8]]] = [
            Self.appLikePayloads(2_000, seed: 1), Self.appLikePayloads(40, seed: 2), opaque,
            Self.appLikePayloads(3_000, seed: 3), [[0x08, 0x01]], Self.appLikePayloads(500, seed: 4),
        ]
        var firstSequence: UInt64 = 1
        for payloads in blocks {
            var builder = BlockBuilder(firstSequence: firstSequence, timeBefore: 0, chainBefore: EventChain.anchor(logID: Format2CodecTests.logID))
            for (index, payload) in payloads.enumerated() { builder.add(payload[...], at: Int64(index)) }
            var reused: [UInt8] = [], fresh: [UInt8] = []
            let header = builder.encode(layout: .columns, compressor: compressor, scratch: &scratch, into: &reused)
            builder.encode(layout: .columns, compressor: try ZstdCompressor(level: 3), payloadCodec: FieldColumnsCodec(), into: &fresh)
            let same = reused == fresh  // not inside #expect, which would print both MiB-long arrays
            #expect(same, "block of \(payloads.count) events from \(firstSequence): \(reused.count) bytes, fresh \(fresh.count)")
            let block = try reused.withUnsafeBytes { bytes in
                try SealedBlock.decode(
                    header, stored: UnsafeRawBufferPointer(rebasing: bytes[LogFormat.blockHeaderSize...]), decompressor: decompressor,
                    payloadCodec: FieldColumnsCodec()
                ).get()
            }
            #expect(block.events.map { Array($0.payload) } == payloads)
            #expect(block.chainHolds())
            firstSequence += UInt64(payloads.count)
        }
    }

    /// The word dictionary's table grows as words arrive; every word keeps its first index,
    /// through every growth, and a new word always gets the next one.
    @Test func theWordDictionaryKeepsEveryWordsIndexAsItGrows() {
        var dictionary = WordDictionary()
        let words = (0..<5_000).map { Array("w\($0 * 7919 % 5_003)".utf8) } + [[]]
        for (index, word) in words.enumerated() {
            let (given, isNew) = word.withUnsafeBytes { dictionary.index(of: $0) }
            #expect(given == UInt64(index) && isNew, "word \(index)")
        }
        for (index, word) in words.enumerated().reversed() {
            let (given, isNew) = word.withUnsafeBytes { dictionary.index(of: $0) }
            #expect(given == UInt64(index) && !isNew, "word \(index) asked again")
        }
    }

    @Test func fieldColumnsAreSmallerThanZstdAloneOnAppLikePayloads() throws {
        let payloads = Self.appLikePayloads(5_000)
        func size(_ fieldColumns: Bool) throws -> Int {
            var builder = BlockBuilder(firstSequence: 1, timeBefore: 0, chainBefore: EventChain.anchor(logID: Format2CodecTests.logID))
            for (index, payload) in payloads.enumerated() { builder.add(payload[...], at: Int64(index)) }
            var bytes: [UInt8] = []
            builder.encode(layout: .columns, compressor: try ZstdCompressor(level: 3), payloadCodec: fieldColumns ? FieldColumnsCodec() : nil, into: &bytes)
            return bytes.count
        }
        let plain = try size(false), fields = try size(true)
        #expect(Double(fields) < Double(plain) * 0.85, "field columns \(fields) bytes, zstd alone \(plain)")
    }

    @Test func theRowsLayoutNeverCarriesFieldColumns() throws {
        var builder = BlockBuilder(firstSequence: 1, timeBefore: 0, chainBefore: EventChain.anchor(logID: Format2CodecTests.logID))
        for (index, payload) in Self.appLikePayloads(200).enumerated() { builder.add(payload[...], at: Int64(index)) }
        var bytes: [UInt8] = []
        let header = builder.encode(layout: .rows, compressor: try ZstdCompressor(level: 3), payloadCodec: FieldColumnsCodec(), into: &bytes)
        #expect(header.codec == .zstd)
        // A header claiming field columns in rows is refused before its payload is read.
        bytes[6] = LogFormat.Layout.rows.rawValue
        bytes[5] = LogFormat.Codec.fieldColumns.rawValue
        let crc = CRC32C.checksum(Array(bytes[0..<LogFormat.blockHeaderCRCOffset]))
        bytes.setLittleEndian(crc, at: LogFormat.blockHeaderCRCOffset)
        #expect(throws: DamageReason.self) { try Format2BlockTests.decode(bytes).get() }
    }

    @Test func aFormWithTheWrongCountOrLengthIsRefused() throws {
        let payloads = Self.appLikePayloads(50)
        let (form, rawLength) = try Self.roundTrip(payloads)
        func rebuild(count: Int, rawLength: Int) -> Result<[UInt8], DamageReason> {
            form.withUnsafeBytes { FieldColumnsDecoder.rebuild($0, count: count, rawLength: rawLength) }
        }
        #expect(throws: DamageReason.self) { try rebuild(count: 49, rawLength: rawLength).get() }
        #expect(throws: DamageReason.self) { try rebuild(count: 51, rawLength: rawLength).get() }
        #expect(throws: DamageReason.self) { try rebuild(count: 50, rawLength: rawLength - 1).get() }
        #expect(throws: DamageReason.self) { try rebuild(count: 50, rawLength: rawLength + 1).get() }
        #expect((try? rebuild(count: 50, rawLength: rawLength).get()) != nil)
    }

    /// A form is only ever read after its block's CRC held, but a bad writer must still not make
    /// a reader crash, loop or allocate without bound: every change is refused or rebuilds
    /// exactly the raw length asked for.
    @Test func damagedFormsAreRefusedWithoutCrashing() throws {
        let payloads = Array(Self.appLikePayloads(300)) + Self.edgePayloads()
        let (form, rawLength) = try Self.roundTrip(payloads)
        var random = Random(seed: 2026)
        var refused = 0
        for trial in 0..<1_500 {
            var damaged = form
            for _ in 0...(trial % 3) {
                let at = random.below(damaged.count)
                damaged[at] = trial % 2 == 0 ? damaged[at] ^ UInt8(1 << random.below(8)) : UInt8(truncatingIfNeeded: random.next())
            }
            let result = damaged.withUnsafeBytes { FieldColumnsDecoder.rebuild($0, count: payloads.count, rawLength: rawLength) }
            switch result {
            case .failure: refused += 1
            case .success(let raw): #expect(raw.count == rawLength)
            }
        }
        // Changed plane bytes are still valid numbers (the block's CRC is what catches them);
        // changed structure is refused.
        #expect(refused > 500)
    }
}

extension SplitMix {
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}
