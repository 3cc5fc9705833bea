import EventLog
import FieldColumns
import SeededRandom
import StorageTestSupport
import Testing

/// Codec 2 written by the module's compactor and erasure, read by the independent reader
/// (IndependentFieldColumns.swift, written from docs/FORMAT.md alone): the same events, the same
/// head. The payloads are protobuf messages made here with every field the section tells apart,
/// and some that are not protobuf at all, so that both sides' choices and rules meet.
@Suite struct IndependentReaderCodec2Tests {
    typealias Event = IndependentReaderTests.Event

    static func varint(_ value: UInt64) -> [UInt8] { IndependentFieldColumns.minimalVarint(value) }
    static func tag(_ number: UInt64, _ wire: UInt64) -> [UInt8] { varint(number << 3 | wire) }
    static func bytes(_ number: UInt64, _ body: [UInt8]) -> [UInt8] { tag(number, 2) + varint(UInt64(body.count)) + body }
    static func text(_ number: UInt64, _ body: String) -> [UInt8] { bytes(number, Array(body.utf8)) }

    /// Events after `time`, most of them a message like the app's: a type, a digest, a nested
    /// place with coordinates and a decimal id, that id again at the top and inside a photo URL
    /// (or another) with a hex secret, words from a small vocabulary, a fixed32; every tenth is random bytes
    /// and every tenth a message with a varint that is not minimal (both kept whole).
    static func protobufEvents(_ count: Int, after time: Int64, seed: UInt64) -> [Event] {
        var numbers = SplitMix(seed: seed)
        let vocabulary = ["harbour", "sunset", "over", "the", "bay", "old", "town", "x"]
        var events: [Event] = []
        var now = time
        for index in 0..<count {
            now += Int64(numbers.next() % 5000)
            var payload: [UInt8] = []
            switch index % 10 {
            case 9: payload = (0..<(20 + index % 30)).map { _ in UInt8(truncatingIfNeeded: numbers.next()) }
            case 8: payload = tag(1, 0) + [0x81, 0x00] + text(2, "not minimal")
            default:
                let id = 50_000_000_000 + numbers.next() % 1000
                payload += tag(1, 0) + varint(UInt64(index % 5 + 1))
                payload += bytes(2, (0..<32).map { _ in UInt8(truncatingIfNeeded: numbers.next()) })
                var place = tag(1, 1) + IndependentBytes.le(numbers.next()) + tag(2, 1) + IndependentBytes.le(numbers.next())
                place += text(3, String(id % 97))
                if index % 3 == 0 { place += tag(4, 0) + varint(UInt64.max - numbers.next() % 3) }
                payload += bytes(3, place)
                payload += text(4, String(id))
                let words = (0..<(1 + numbers.next() % 5)).map { _ in vocabulary[Int(numbers.next() % 8)] }
                payload += text(5, words.joined(separator: " "))
                let secret = String(numbers.next() % (1 << 40), radix: 16)
                let padded = String(repeating: "0", count: 10 - secret.count) + secret
                // Mostly the id met before (a 0x02 marker), sometimes another (0x01): the markers
                // after it then keep their place only if 0x02 counts among the template's markers.
                let photo = index % 7 == 0 ? id + 1 : id
                payload += text(6, "https://live.staticflickr.com/65535/\(photo)_\(padded)_b.jpg?n=\(index)")
                payload += tag(7, 5) + IndependentBytes.le(UInt32(truncatingIfNeeded: numbers.next()))
                if index % 4 == 0 { payload += text(8, "") + text(9, "007") + text(9, "0") }
                if index % 5 == 0 { payload += text(5, "bay") + text(10, "a  b") + tag(11, 0) + varint(0) }
            }
            events.append((now, payload))
        }
        return events
    }

    @Test func aStoreOfCodec2BlocksReadsTheSame() throws {
        let folder = TemporaryFolder.made("independent-codec2")
        var settings = Format2LogTests.format2(segmentSize: 16 << 10)
        settings.blockSize = 32 << 10
        settings.payloadCodec = FieldColumnsCodec()
        let log = try EventLog.open(at: folder.path, configuration: settings)
        let events = Self.protobufEvents(600, after: 1_700_000_000_000_000, seed: 21)
        try IndependentReaderTests.append(events, to: log)
        try log.compact()
        // Erasure rewrites a block, whose raw payload then starts with an erasure list (in `head`).
        try log.erase([3: [0x02], 17: [], 250: [UInt8](repeating: 7, count: 16)])
        try log.close()

        let independent = try IndependentReaderTests.expectSameAsTheModule(folder.path)
        #expect(independent.events.count == events.count)
        // Every block, the ones erasure rewrote too, is codec 2.
        #expect(independent.blockKinds == [[2, 1]], "\(independent.blockKinds)")
        // The writer's choices reached every part of the section, so both sides met on each.
        let everyPart: Set = [
            "form 0", "form 1", "wire 0", "wire 1", "wire 2", "wire 5", "kind 1", "kind 2", "kind 3", "kind 4", "kind 5",
            "repeated word", "marker 1", "marker 2", "marker 3", "mode 0", "mode 1",
        ]
        #expect(independent.fieldsSeen.isSuperset(of: everyPart), "missing \(everyPart.subtracting(independent.fieldsSeen))")
        // Erased: the 32-byte digest, then what was kept.
        #expect(independent.events.filter { [3, 17, 250].contains($0.sequence) }.map(\.payload.count) == [33, 32, 48])
    }
}

extension IndependentReaderCodec2Tests {
    /// Messages nested 1 to 20 deep (the payload's own counted as the first): the writer must
    /// keep within "at most 16 messages deep" as the independent reader counts it.
    @Test func deeplyNestedMessagesReadTheSame() throws {
        let folder = TemporaryFolder.made("independent-codec2")
        var settings = Format2LogTests.format2()
        settings.payloadCodec = FieldColumnsCodec()
        let log = try EventLog.open(at: folder.path, configuration: settings)
        var events: [Event] = []
        for depth in 1...20 {
            var message = Self.tag(2, 0) + Self.varint(UInt64(depth))
            for _ in 1..<depth { message = Self.bytes(1, message) + Self.tag(3, 0) + Self.varint(1) }
            events.append((1_700_000_000_000_000 + Int64(depth), message))
        }
        try IndependentReaderTests.append(events, to: log)
        try log.compact()
        try log.close()
        let independent = try IndependentReaderTests.expectSameAsTheModule(folder.path)
        #expect(independent.blockKinds == [[2, 1]])
        #expect(independent.fieldsSeen.contains("kind 1"))
    }
}
