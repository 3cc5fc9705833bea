@testable import EventLog
@testable import FieldColumns
import SeededRandom
import StorageTestSupport
import Testing

/// Codec 2 on blocks whose events repeat a few shapes, as the app's do: seeded blocks of
/// messages of a few kinds — nested messages whose decimals and templates refer to one another
/// (a template's repeat marker names a decimal of its own message, never one of the message
/// around it), words, hex, digests, opaque payloads between them, dozens of kinds and shapes
/// hundreds of bytes long — come back byte for byte. A failing seed is printed.
@Suite(.heavy) struct RepeatedShapeTests {
    typealias Proto = FieldColumnsTests.Proto

    /// One field of a message kind: what it holds, drawn anew for every message.
    enum Field {
        case varint, fixed64, fixed32, digest, decimal, words, template, hex, nested([Int: Field]), repeated(Int, [Int: Field])
    }

    static let vocabulary = ["harbour", "old", "town", "sunset", "bridge", "market"]

    /// A message kind: fields in order, some of them messages of their own.
    static func kind(_ random: inout SplitMix, depth: Int = 0) -> [Int: Field] {
        var fields: [Int: Field] = [:]
        for number in 1...(2 + random.below(5)) {
            switch random.below(depth < 2 ? 11 : 8) {
            case 0: fields[number] = .varint
            case 1: fields[number] = .fixed64
            case 2: fields[number] = .fixed32
            case 3: fields[number] = .digest
            case 4: fields[number] = .decimal
            case 5: fields[number] = .words
            case 6: fields[number] = .template
            case 7: fields[number] = .hex
            case 8, 9: fields[number] = .nested(kind(&random, depth: depth + 1))
            default: fields[number] = .repeated(1 + random.below(16), kind(&random, depth: depth + 1))
            }
        }
        return fields
    }

    /// A message of `kind`: a template repeats the message's last decimal (an `0x02` marker
    /// when it is of this message; the digits again, as text, when they are not).
    static func message(_ kind: [Int: Field], _ random: inout SplitMix) -> Proto {
        var proto = Proto()
        var lastDecimal = "7"
        for number in kind.keys.sorted() {
            switch kind[number]! {
            case .varint: proto.varint(number, random.next() >> UInt64(random.below(64)))
            case .fixed64: proto.fixed64(number, random.next())
            case .fixed32: proto.fixed32(number, UInt32(truncatingIfNeeded: random.next()))
            case .digest: proto.data(number, random.bytes(32))
            case .decimal:
                lastDecimal = String(random.next() % 100_000_000)
                proto.text(number, lastDecimal)
            case .words:
                proto.text(number, (0...random.below(3)).map { _ in vocabulary[random.below(vocabulary.count)] }.joined(separator: " "))
            case .template: proto.text(number, "photo_\(lastDecimal)_\(random.below(1000)).jpg")
            case .hex: proto.text(number, "id-" + String(random.next() % 0xFFFF_FFFF + 0x1000_0000, radix: 16))
            case .nested(let inner): proto.message(number, message(inner, &random))
            case .repeated(let times, let inner):
                for _ in 0..<times { proto.message(number, message(inner, &random)) }
            }
        }
        return proto
    }

    static func block(seed: UInt64) -> [[UInt8]] {
        var random = SplitMix(seed: seed)
        let kinds = (0..<(1 + random.below(45))).map { _ in kind(&random) }
        return (0..<(50 + random.below(400))).map { _ in
            switch random.below(20) {
            case 0: return random.bytes(random.below(60))
            default: return message(kinds[random.below(min(kinds.count, 1 + random.below(kinds.count)))], &random).bytes
            }
        }
    }

    @Test(arguments: 1...40) func blocksOfRepeatedShapesComeBackByteForByte(seed: Int) throws {
        let payloads = Self.block(seed: UInt64(seed))
        var encoder = FieldColumnsEncoder()
        for payload in payloads { encoder.add(payload[...]) }
        let form = try #require(encoder.finish(head: []), "seed \(seed): no field form")
        var raw: [UInt8] = []
        for payload in payloads { raw.appendVarint(UInt64(payload.count)) }
        for payload in payloads { raw += payload }
        let rebuilt = form.withUnsafeBytes { FieldColumnsDecoder.rebuild($0, count: payloads.count, rawLength: raw.count) }
        switch rebuilt {
        case .success(let bytes):
            // The first byte that differs, not both blocks: they run to megabytes.
            let common = min(bytes.count, raw.count)
            let differs = (0..<common).first { bytes[$0] != raw[$0] } ?? (bytes.count == raw.count ? nil : common)
            #expect(differs == nil, "seed \(seed): the block rebuilt differs from byte \(differs ?? 0) of \(raw.count) on")
        case .failure(let reason):
            Issue.record("seed \(seed): a block refused: \(reason)")
        }
    }

    /// The nested case a reader must keep apart: an inner message's template repeats the inner
    /// message's own decimal, not the outer one's that comes before it, event after event.
    @Test func aRepeatedShapesTemplateRepeatsItsOwnMessagesDecimal() throws {
        var payloads: [[UInt8]] = []
        for index in 0..<50 {
            var inner = Proto()
            inner.text(1, String(1_000 + index))
            inner.text(2, "x\(1_000 + index)y")
            var outer = Proto()
            outer.text(1, String(500_000 + index))
            outer.message(2, inner)
            payloads.append(outer.bytes)
        }
        _ = try FieldColumnsTests.roundTrip(payloads)
    }
}
