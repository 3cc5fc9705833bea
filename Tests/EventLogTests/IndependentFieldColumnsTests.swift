import CZstd
import Testing

/// The independent reading of codec 2's field form (docs/FORMAT.md, "Codec 2: field columns"),
/// on field forms built here byte by byte from the section's tables, so that the reader is held
/// to the document before it ever meets the module's writer.
@Suite struct IndependentFieldColumnsTests: FormatBytes {
    typealias R = IndependentFieldColumns

    /// `F` from its parts, in the table's order: head_length, head, column_count, the column
    /// lengths, the columns. The parts here are all shorter than 128 bytes: one-byte varints.
    static func form(head: [UInt8], _ columns: [[UInt8]]) -> [UInt8] {
        precondition(head.count < 128 && columns.count < 128 && columns.allSatisfy { $0.count < 128 })
        return [UInt8(head.count)] + head + [UInt8(columns.count)] + columns.map { UInt8($0.count) } + columns.flatMap { $0 }
    }

    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// An opaque column of one value, "hi": 1 length, mode 0, width 1, the length 2; the bytes.
    static let hi: [UInt8] = [0x01, 0x00, 0x01, 0x02] + ascii("hi")

    /// Refused for the rule `reason` names (part of the broken rule's text), not some other.
    static func refused(
        _ f: [UInt8], events: Int = 1, rawLength: Int = 100, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: FormatRuleBroken.self, sourceLocation: sourceLocation) {
            try R.rebuild(f, eventCount: events, rawLength: rawLength)
        }
        #expect(error?.description.contains(reason) == true, "\(error?.description ?? "")", sourceLocation: sourceLocation)
    }

    // MARK: Forms that rebuild

    @Test func oneOpaqueEvent() throws {
        let f = Self.form(head: [0x05], [
            [0x00],  // shape: form 0, kept whole
            Self.hi,
        ])
        #expect(try R.rebuild(f, eventCount: 1, rawLength: 4) == [0x05, 0x02, 0x68, 0x69])
    }

    /// A width-0 column stores only zeros: here one empty payload.
    @Test func aWidthZeroColumnHoldsZeros() throws {
        let f = Self.form(head: [0x00], [[0x00], [0x01, 0x00, 0x00]])
        #expect(try R.rebuild(f, eventCount: 1, rawLength: 2) == [0x00, 0x00])
    }

    /// One message with a field of every wire type and every kind, its columns numbered in the
    /// order the shape first uses them.
    static let everyKind: (form: [UInt8], raw: [UInt8]) = {
        let shape: [UInt8] = [
            0x01,  // form 1: a message
            0x08,  // field 1, varint
            0x11,  // field 2, fixed64
            0x1A, 0x01, 0x08, 0x00,  // field 3, kind 1: a message of field 1 (varint), ended
            0x22, 0x03,  // field 4, decimal
            0x2A, 0x04,  // field 5, words
            0x32, 0x05,  // field 6, template
            0x3D,  // field 7, fixed32
            0x00,  // end of the message
        ]
        // "id " 0x02 0 " at " 0x03 4 " and " 0x01: markers 0, 1 and 2 of the template.
        let template = ascii("id ") + [0x02, 0x00] + ascii(" at ") + [0x03, 0x04] + ascii(" and ") + [0x01]
        let columns: [[UInt8]] = [
            shape,
            [0x01, 0x00, 0x02, 0x2C, 0x01],  // 1 [08]: 300 in two planes
            [0x01, 0x00, 0x08, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01],  // 2 [11]: 0x0102030405060708
            [0x01, 0x00, 0x01, 0x07],  // 3 [1a 08]: 7
            [0x01, 0x00, 0x02, 0x39, 0x30],  // 4 [22] decimal: 12345
            [0x01, 0x00, 0x01, 0x03],  // 5 [2a] word count: 3
            [0x03, 0x00, 0x01, 0x00, 0x01, 0x00],  // 6 [2a] word index: 0 (new), 1 (new), 0
            [0x02, 0x00, 0x01, 0x03, 0x03] + ascii("redfox"),  // 7 [2a] new words: "red", "fox"
            [0x01, 0x00, 0x01, UInt8(template.count)] + template,  // 8 [32] template
            [0x01, 0x00, 0x02, 0x1B, 0x0A],  // 9 [32] marker 1 of byte 0x03: 0x0a1b
            [0x01, 0x00, 0x01, 0x2A],  // 10 [32] marker 2 of byte 0x01: 42
            [0x01, 0x00, 0x04, 0xEF, 0xBE, 0xAD, 0xDE],  // 11 [3d]: 0xdeadbeef
        ]
        let payload: [UInt8] = [0x08, 0xAC, 0x02]
            + [0x11, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]
            + [0x1A, 0x02, 0x08, 0x07]
            + [0x22, 0x05] + ascii("12345")
            + [0x2A, 0x0B] + ascii("red fox red")
            + [0x32, 0x17] + ascii("id 12345 at 0a1b and 42")
            + [0x3D, 0xEF, 0xBE, 0xAD, 0xDE]
        precondition(payload.count == 66)
        return (form(head: [0x00], columns), [0x00, 0x42] + payload)
    }()

    @Test func aMessageOfEveryKind() throws {
        let (f, raw) = Self.everyKind
        #expect(try R.rebuild(f, eventCount: 1, rawLength: raw.count) == raw)
    }

    /// A words field's words are the block's: a word new in one event is indexed in the next.
    @Test func wordsCarryAcrossTheBlocksEvents() throws {
        let f = Self.form(head: [0x00, 0x01], [
            [0x01, 0x0A, 0x04, 0x00, 0x01, 0x0A, 0x04, 0x00],  // two messages of field 1, words
            [0x02, 0x00, 0x01, 0x02, 0x02],  // word counts 2, 2
            [0x04, 0x00, 0x01, 0x00, 0x01, 0x01, 0x02],  // indices 0 (new), 1 (new); 1, 2 (new)
            [0x03, 0x00, 0x01, 0x01, 0x01, 0x01] + Self.ascii("abc"),
        ])
        let payloads = [[0x0A, 0x03] + Self.ascii("a b"), [0x0A, 0x03] + Self.ascii("b c")]
        #expect(try R.rebuild(f, eventCount: 2, rawLength: 14) == [0x00, 0x01, 0x05, 0x05] + payloads[0] + payloads[1])
    }

    /// Mode 1: zigzag deltas from 0. 1000, 1003, 999 are +1000, +3, −4: stored 2000, 6, 7.
    @Test func aDeltaModeColumn() throws {
        let f = Self.form(head: [0x00, 0x01, 0x02], [
            [0x01, 0x08, 0x00, 0x01, 0x08, 0x00, 0x01, 0x08, 0x00],
            [0x03, 0x01, 0x02, 0xD0, 0x06, 0x07, 0x07, 0x00, 0x00],  // plane 0, then plane 1
        ])
        let raw: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0x03, 0x03, 0x08, 0xE8, 0x07, 0x08, 0xEB, 0x07, 0x08, 0xE7, 0x07]
        #expect(try R.rebuild(f, eventCount: 3, rawLength: raw.count) == raw)
    }

    /// A delta wraps modulo 2^64: −1 from 0 is 2^64 − 1, a ten-byte varint.
    @Test func aDeltaWrapsModulo2To64() throws {
        let f = Self.form(head: [0x00], [[0x01, 0x08, 0x00], [0x01, 0x01, 0x01, 0x01]])
        let raw: [UInt8] = [0x00, 0x0B, 0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x01]
        #expect(try R.rebuild(f, eventCount: 1, rawLength: raw.count) == raw)
    }

    /// A message 16 deep (the payload's own and 15 kind-1 fields) is read; 17 is not.
    @Test func messagesAtMost16Deep() throws {
        func nested(_ depth: Int) -> [UInt8] {
            [0x01] + Array([[UInt8]](repeating: [0x0A, 0x01], count: depth - 1).joined())
                + [UInt8](repeating: 0x00, count: depth)
        }
        var inner: [UInt8] = []
        for _ in 1..<16 { inner = [0x0A, UInt8(inner.count)] + inner }
        let f16 = Self.form(head: [0x00], [nested(16)])
        #expect(try R.rebuild(f16, eventCount: 1, rawLength: 2 + inner.count) == [0x00, UInt8(inner.count)] + inner)
        Self.refused(Self.form(head: [0x00], [nested(17)]), "at most 16 deep")
    }

    // MARK: Forms refused

    @Test func leftoverColumnValuesAreRefused() throws {
        // One opaque event, two opaque values.
        let two = [0x02, 0x00, 0x01, 0x02, 0x01] + Self.ascii("hiX")
        Self.refused(Self.form(head: [0x05], [[0x00], two]), rawLength: 4, "left over")
        // The shape itself with a byte after the last event.
        Self.refused(Self.form(head: [0x05], [[0x00, 0x00], Self.hi]), rawLength: 4, "nothing after the last event")
    }

    @Test func readingPastAColumnsEndIsRefused() throws {
        // Two opaque events, one value.
        Self.refused(Self.form(head: [0x05, 0x05], [[0x00, 0x00], Self.hi]), events: 2, "not read past its end")
        // A message that never ends: the shape runs out.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x08], [0x01, 0x00, 0x01, 0x07]]), "a varint that ends before")
        // A bytes column whose lengths pass its end.
        let short = [0x01, 0x00, 0x01, 0x03] + Self.ascii("hi")
        Self.refused(Self.form(head: [0x05], [[0x00], short]), rawLength: 5, "bytes within the column")
    }

    @Test func unknownFormKindWireTypeAndModeAreRefused() throws {
        Self.refused(Self.form(head: [0x00], [[0x02]]), "known form")  // form 2
        Self.refused(Self.form(head: [0x00], [[0x01, 0x0A, 0x06, 0x00], [0x01, 0x00, 0x00]]), "known kind")  // kind 6
        Self.refused(Self.form(head: [0x00], [[0x01, 0x0A, 0x00, 0x00], [0x01, 0x00, 0x00]]), "known kind")  // kind 0
        // Wire type 3.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x0B, 0x00], [0x01, 0x00, 0x00]]), "known wire type")
        // Wire type 6.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x0E, 0x00], [0x01, 0x00, 0x00]]), "known wire type")
        // Field number 0.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x02, 0x00], [0x01, 0x00, 0x01, 0x07]]), "field number of at least 1")
        // Mode 2.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x08, 0x00], [0x01, 0x02, 0x01, 0x07]]), "known numeric mode")
        let width9 = [0x01, 0x00, 0x09] + [UInt8](repeating: 7, count: 9)
        Self.refused(Self.form(head: [0x00], [[0x01, 0x08, 0x00], width9]), "width of 0 to 8")
    }

    @Test func brokenNumbersAndMarkersAreRefused() throws {
        let twentyDigits: [UInt8] = [0x01, 0x00, 0x08] + Self.le(UInt64(10_000_000_000_000_000_000))
        Self.refused(Self.form(head: [0x00], [[0x01, 0x0A, 0x03, 0x00], twentyDigits]), "at most 19 digits")
        func template(_ bytes: [UInt8], _ more: [[UInt8]] = []) -> [UInt8] {
            Self.form(head: [0x00], [[0x01, 0x0A, 0x05, 0x00], [0x01, 0x00, 0x01, UInt8(bytes.count)] + bytes] + more)
        }
        Self.refused(template([0x41, 0x02]), "end inside a marker")  // ends inside a 0x02 marker
        Self.refused(template([0x41, 0x03]), "end inside a marker")  // ends inside a 0x03 marker
        Self.refused(template([0x02, 0x00]), "0x02 marker naming")  // no kind-3 field before it
        // A byte below 0x04 that is no marker; the same byte as a marker's operand is its part.
        Self.refused(template([0x41, 0x00, 0x42]), "below 0x04 only in a marker")
        Self.refused(template([0x03, 0x00], [[0x01, 0x00, 0x01, 0x05]]), "1 to 16 digits")  // 0 hex digits
        Self.refused(template([0x03, 0x11], [[0x01, 0x00, 0x01, 0x05]]), "1 to 16 digits")  // 17 hex digits
        Self.refused(template([0x03, 0x01], [[0x01, 0x00, 0x01, 0x10]]), "fits in 1 digits")  // 0x10 in one digit
        Self.refused(template([0x01], [twentyDigits]), "at most 19 digits")
        // With a value that fits, a hex marker keeps its leading zero: 5 in two digits is "05".
        #expect(try R.rebuild(template([0x03, 0x02], [[0x01, 0x00, 0x01, 0x05]]), eventCount: 1, rawLength: 6)
            == [0x00, 0x04, 0x0A, 0x02, 0x30, 0x35])
    }

    @Test func brokenWordsAreRefused() throws {
        func words(_ count: UInt8, _ indices: [UInt8], _ new: [UInt8]) -> [UInt8] {
            Self.form(head: [0x00], [
                [0x01, 0x0A, 0x04, 0x00], [0x01, 0x00, 0x01, count],
                [UInt8(indices.count), 0x00, 0x01] + indices, [0x01, 0x00, 0x01, UInt8(new.count)] + new,
            ])
        }
        Self.refused(words(1, [0x01], Self.ascii("a")), "word index no greater")  // index 1 with no words yet
        Self.refused(words(1, [0x00], []), "not empty and has no space")  // an empty word
        Self.refused(words(1, [0x00], Self.ascii("a b")), "not empty and has no space")  // a space inside a word
        // No words.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x0A, 0x04, 0x00], [0x01, 0x00, 0x01, 0x00]]), "one or more words")
    }

    @Test func brokenFramingIsRefused() throws {
        let one = Self.form(head: [0x05], [[0x00], Self.hi])
        Self.refused(one, rawLength: 5, "exactly raw_length")  // not raw_length
        Self.refused(one + [0x00], rawLength: 4, "end exactly at the end of F")  // columns not ending at the end of F
        // The last column past the end of F.
        Self.refused(Array(one.dropLast()), rawLength: 4, "ends within the field form")
        Self.refused([0x00, 0x00], rawLength: 4, "column_count of at least 1")  // column_count 0
        // A column no place uses, though it is empty of values.
        let unused = Self.form(head: [0x05], [[0x00], Self.hi, [0x00, 0x00, 0x00]])
        Self.refused(unused, rawLength: 4, "no column that no place uses")
        // A numeric column with a byte after its planes.
        Self.refused(Self.form(head: [0x00], [[0x01, 0x08, 0x00], [0x01, 0x00, 0x01, 0x07, 0x00]]), "ends at its column_length")
    }

    // MARK: In a block

    /// A block of codec `codec`, from sequence 1, whose chain fields are left zero (a block on
    /// its own does not check them).
    static func block(codec: UInt8, layout: UInt8, stored: [UInt8], rawLength: Int, lastTime: Int64) -> [UInt8] {
        var h = ascii("VTBK") + [0x02, codec, layout, 0x00] + le(UInt64(1)) + le(UInt32(1))
        h += le(UInt32(stored.count)) + le(UInt32(rawLength)) + le(Int64(1000)) + le(lastTime)
        h += [UInt8](repeating: 0, count: 64) + le(crc32c(stored))
        return h + le(crc32c(h)) + stored
    }

    static func zstd(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let size = out.withUnsafeMutableBytes { ZSTD_compress($0.baseAddress, $0.count, bytes, bytes.count, 3) }
        return Array(out[..<size])
    }

    @Test func aCodec2BlockReadsThroughItsFieldForm() throws {
        let (f, raw) = Self.everyKind
        let bytes = Self.block(codec: 2, layout: 1, stored: Self.zstd(f), rawLength: raw.count, lastTime: 1000)
        let block = try IndependentFormat2.block(bytes, at: 0)
        #expect(block.raw == raw)
        #expect(block.events.map(\.payload) == [Array(raw[2...])])
        // Codec 2 with rows, and a frame of the raw payload rather than of F, are refused.
        let rows = Self.block(codec: 2, layout: 0, stored: Self.zstd(f), rawLength: raw.count, lastTime: 1000)
        #expect(throws: FormatRuleBroken.self) { try IndependentFormat2.block(rows, at: 0) }
        let notF = Self.block(codec: 2, layout: 1, stored: Self.zstd(raw), rawLength: raw.count, lastTime: 1000)
        #expect(throws: FormatRuleBroken.self) { try IndependentFormat2.block(notF, at: 0) }
    }
}
