@testable import EventLog
@testable import LegacyLogWriter
import SeededRandom
import Testing

@Suite struct CodecTests {
    @Test func crc32cMatchesTheCheckValueAndABitwiseReference() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        var generator = SplitMix(seed: 7)
        for size in [0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 1000, 4099] {
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(CRC32C.checksum(bytes) == IndependentBytes.crc32c(bytes), "size \(size)")
            // Feeding the bytes in two parts gives the same value as one call.
            var split = CRC32C()
            split.update(Array(bytes.prefix(size / 3)))
            split.update(Array(bytes.dropFirst(size / 3)))
            #expect(split.value == CRC32C.checksum(bytes))
        }
    }

    /// The instruction and slicing-by-8 agree at every length and alignment (the tests run on
    /// a CPU with SSE4.2, so ``CRC32C/update(_:)-(UnsafeRawBufferPointer)`` takes the instruction).
    @Test func theInstructionAndTheTablesAgree() {
        #expect(CRC32C.usesInstruction, "this x86-64 machine has SSE4.2")
        var generator = SplitMix(seed: 11)
        let bytes = (0..<600).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { all in
            for offset in 0..<9 {
                for length in [0, 1, 3, 7, 8, 9, 16, 17, 31, 64, 100, 257, 590 - offset] {
                    let part = UnsafeRawBufferPointer(rebasing: all[offset..<offset + length])
                    var hardware = CRC32C(), software = CRC32C()
                    hardware.update(part)
                    software.updateInSoftware(part)
                    #expect(hardware.value == software.value, "offset \(offset), length \(length)")
                    #expect(software.value == IndependentBytes.crc32c(Array(part)))
                }
            }
        }
    }

    /// From 6 KiB on, the instruction folds three stretches at once and joins them
    /// (Sources/CCRC32C): the same values at the edges of that path, at every alignment, from a
    /// fresh register and from one part-way through.
    @Test func threeStretchesJoinToTheSameValue() {
        var generator = SplitMix(seed: 13)
        let bytes = (0..<100_020).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { all in
            for offset in [0, 1, 5, 8] {
                for length in [6_143, 6_144, 6_145, 6_151, 6_152, 6_167, 10_000, 65_539, 100_003] {
                    let part = UnsafeRawBufferPointer(rebasing: all[offset..<offset + length])
                    var hardware = CRC32C(), software = CRC32C()
                    hardware.update(part)
                    software.updateInSoftware(part)
                    #expect(hardware.value == software.value, "offset \(offset), length \(length)")
                    // After a first part, the register is no longer the starting one.
                    var continued = CRC32C(), reference = CRC32C()
                    continued.update(UnsafeRawBufferPointer(rebasing: part.prefix(13)))
                    continued.update(UnsafeRawBufferPointer(rebasing: part.dropFirst(13)))
                    reference.updateInSoftware(part)
                    #expect(continued.value == reference.value, "offset \(offset), length \(length), continued")
                }
            }
        }
    }

    @Test(arguments: [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 35, UInt64(Int64.max), UInt64.max])
    func varintRoundTrips(_ value: UInt64) {
        var bytes: [UInt8] = []
        bytes.appendVarint(value)
        #expect(bytes.count == max(1, (64 - value.leadingZeroBitCount + 6) / 7))
        bytes.withUnsafeBytes {
            var cursor = ByteCursor($0)
            #expect(cursor.readVarint() == value)
            #expect(cursor.remaining == 0)
        }
    }

    @Test func malformedVarintsAreRefused() {
        let cases: [[UInt8]] = [
            [0x80],  // ends inside the number
            [],
            Array(repeating: 0xFF, count: 10) + [0x01],  // eleven bytes
            Array(repeating: 0xFF, count: 9) + [0x02],  // does not fit in 64 bits
        ]
        for bytes in cases {
            bytes.withUnsafeBytes {
                var cursor = ByteCursor($0)
                #expect(cursor.readVarint() == nil, "\(bytes)")
                #expect(cursor.position == 0)
            }
        }
    }

    @Test(arguments: [1, 2, 50, 1000])
    func batchesRoundTrip(_ count: Int) throws {
        var builder = BatchBuilder()
        var time: Int64 = 1_000
        var expected: [(Int64, [UInt8])] = []
        for index in 0..<count {
            let payload = syntheticPayload(UInt64(index + 1))
            builder.add(payload, at: LogTimestamp(microsecondsSinceEpoch: time))
            expected.append((time, payload))
            time += Int64(index % 3)
        }
        var bytes: [UInt8] = []
        let genesis = ChainHash.of([1, 2, 3])
        let header = builder.encode(
            firstSequence: 10, previousHash: genesis, compressor: try ZstdCompressor(level: 3), into: &bytes)
        #expect(header.codec == .raw || header.storedLength < header.rawLength)
        #expect(header.eventCount == UInt32(count))
        #expect(header.previousHash == genesis)
        #expect(bytes.count == header.totalSize)
        let decoded = try bytes.withUnsafeBytes { all in
            try DecodedBatch.decode(
                header, stored: UnsafeRawBufferPointer(rebasing: all[LegacyFormat.batchHeaderSize...]),
                decompressor: ZstdDecompressor()
            ).get()
        }
        let events = decoded.events
        #expect(events.map(\.sequence) == Array(10..<10 + UInt64(count)))
        #expect(events.map(\.timestamp.microsecondsSinceEpoch) == expected.map(\.0))
        #expect(events.map { Array($0.payload) } == expected.map(\.1))
    }

    @Test func zstdIsUsedExactlyWhenItMakesThePayloadSmaller() throws {
        var generator = SplitMix(seed: 3)
        let cases: [([UInt8], LegacyFormat.Codec)] = [
            (Array("abc".utf8), .raw),  // a frame's overhead exceeds any saving
            ((0..<1000).map { _ in UInt8.random(in: 0...255, using: &generator) }, .raw),  // incompressible
            (Array(repeating: 42, count: 1000), .zstd),
        ]
        for (payload, codec) in cases {
            var builder = BatchBuilder()
            builder.add(payload, at: LogTimestamp(microsecondsSinceEpoch: 0))
            var bytes: [UInt8] = []
            let header = builder.encode(
                firstSequence: 1, previousHash: ChainHash.of([]), compressor: try ZstdCompressor(level: 3), into: &bytes)
            #expect(header.codec == codec, "\(payload.count) bytes")
        }
    }

    /// A header with one field changed and both checksums made valid again.
    func header(patching patch: (inout [UInt8]) -> Void) -> [UInt8] {
        var builder = BatchBuilder()
        builder.add([1, 2, 3], at: LogTimestamp(microsecondsSinceEpoch: 5))
        var bytes: [UInt8] = []
        _ = builder.encode(firstSequence: 1, previousHash: ChainHash.of([]), compressor: nil, into: &bytes)
        var header = Array(bytes[0..<84])
        patch(&header)
        header.setLittleEndian(CRC32C.checksum(header[0..<80]), at: 80)
        return header
    }

    @Test func headersThatBreakARuleAreRefusedEvenWithAValidChecksum() {
        func problem(_ bytes: [UInt8]) -> BatchHeader.Problem? {
            bytes.withUnsafeBytes { raw in
                if case .failure(let problem) = BatchHeader.decode(raw) { return problem }
                return nil
            }
        }
        #expect(problem(header { _ in }) == nil)
        #expect(problem([UInt8](repeating: 0, count: 84)) == .zero)
        #expect(problem(header { $0[0] = 0x57 }) == .badMagic)
        var flipped = header { _ in }
        flipped[30] ^= 1
        #expect(problem(flipped) == .badChecksum)
        #expect(problem(header { $0[4] = 2 }) == .unsupportedVersion(2))
        #expect(problem(header { $0[5] = 9 }) == .invalidField("an unknown codec 9"))
        #expect(problem(header { $0[6] = 1 }) == .invalidField("reserved bytes that are not zero"))
        #expect(problem(header { $0.setLittleEndian(UInt64(0), at: 8) }) == .invalidField("sequence 0"))
        #expect(problem(header { $0.setLittleEndian(UInt32(0), at: 16) }) == .invalidField("no events"))
        #expect(problem(header { $0.setLittleEndian(UInt32(70_000_000), at: 24) })
            == .invalidField("a raw length of 70000000 bytes, over the 64 MiB limit"))
        #expect(problem(header { $0.setLittleEndian(UInt32(4), at: 24) })
            == .invalidField("a raw payload whose stored and raw lengths differ"))
        #expect(problem(header { $0.setLittleEndian(Int64(4), at: 36) })
            == .invalidField("a last timestamp before its first"))
    }

    /// Payloads whose checksum would pass but whose records do not add up are refused whole.
    @Test func malformedPayloadsAreRefusedWhole() {
        func decode(count: UInt32, first: Int64, last: Int64, raw: [UInt8]) -> String? {
            let header = BatchHeader(
                codec: .raw, firstSequence: 1, eventCount: count, storedLength: UInt32(raw.count),
                rawLength: UInt32(raw.count), firstTimestamp: LogTimestamp(microsecondsSinceEpoch: first),
                lastTimestamp: LogTimestamp(microsecondsSinceEpoch: last), previousHash: ChainHash.of([]), batchCRC: 0)
            return raw.withUnsafeBytes {
                if case .failure(let reason) = DecodedBatch.decode(header, stored: $0, decompressor: ZstdDecompressor()) {
                    return reason.description
                }
                return nil
            }
        }
        #expect(decode(count: 1, first: 0, last: 0, raw: [0, 2, 65, 66]) == nil)
        #expect(decode(count: 2, first: 0, last: 0, raw: [0, 2, 65, 66]) != nil)  // too few records
        #expect(decode(count: 1, first: 0, last: 0, raw: [0, 1, 65, 66]) != nil)  // bytes left over
        #expect(decode(count: 1, first: 0, last: 0, raw: [0, 9, 65]) != nil)  // length past the end
        #expect(decode(count: 1, first: 0, last: 7, raw: [0, 1, 65]) != nil)  // times do not reach last
        #expect(decode(count: 1, first: 0, last: 3, raw: [3, 1, 65]) != nil)  // first delta not zero
        #expect(decode(count: 1, first: 0, last: 0, raw: [0x80]) != nil)  // broken varint
    }

    @Test func movingATimestampSaturatesInsteadOfTrapping() {
        #expect(LogTimestamp(microsecondsSinceEpoch: .max).adding(microseconds: 1).microsecondsSinceEpoch == .max)
        #expect(LogTimestamp(microsecondsSinceEpoch: .min).adding(microseconds: -1).microsecondsSinceEpoch == .min)
        #expect(LogTimestamp(microsecondsSinceEpoch: 5).adding(microseconds: -7).microsecondsSinceEpoch == -2)
    }

    @Test func timestampsPrintAsISO8601() {
        #expect(LogTimestamp(microsecondsSinceEpoch: 1_700_000_000_000_000).description == "2023-11-14T22:13:20.000000Z")
        #expect(LogTimestamp(microsecondsSinceEpoch: 1_500).description == "1970-01-01T00:00:00.001500Z")
        #expect(LogTimestamp(microsecondsSinceEpoch: -1).description == "1969-12-31T23:59:59.999999Z")
    }
}

