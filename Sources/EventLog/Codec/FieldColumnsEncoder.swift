import Foundation

/// Takes a block's payloads apart into codec 2's field form (FORMAT.md, "Codec 2: field
/// columns").
///
/// ```swift
/// var encoder = FieldColumnsEncoder()
/// for payload in payloads { encoder.add(payload) }
/// let form = encoder.finish(head: raw[..<lengthsStart])
/// ```
///
/// Each payload is parsed twice: once strictly, into tokens, with nothing written, so that a
/// payload that turns out not to be canonical protobuf is kept whole without having created
/// places the reader would never see; then its tokens are written to the shape and columns.
struct FieldColumnsEncoder {
    private var places = FieldPlaces()
    private var shape: [UInt8] = []
    private var columns: [FieldColumnBuilder] = [FieldColumnBuilder()]
    /// Per column (word index columns only): the words named so far.
    private var dictionaries: [WordDictionary] = []
    private var tokens: [Token] = []
    /// The places of the messages being written, innermost last.
    private var parents: [Int] = []
    /// The decimals met in the messages being written (ranges of the payload), and where each
    /// message's own decimals begin in that list.
    private var decimals: [Range<Int>] = []
    private var decimalBases: [Int] = []
    private var template: [UInt8] = []

    private struct Token {
        enum Kind: UInt8 { case number, message, end, bytes, decimal, words, template }
        var kind: Kind
        var tag: UInt32
        var value: UInt64 = 0
        var start = 0
        var end = 0
    }

    /// Cleared column builders of earlier blocks, kept for their capacity.
    private var spareColumns: [FieldColumnBuilder] = []

    init() { shape.reserveCapacity(1 << 16) }

    /// Starts the next block, keeping the buffers this one grew: they are a block's size, and
    /// fresh ones cost a page fault every 4 KiB.
    mutating func reset() {
        places = FieldPlaces()
        shape.removeAll(keepingCapacity: true)
        for var column in columns.dropFirst() {
            column.numbers.removeAll(keepingCapacity: true)
            column.bytes.removeAll(keepingCapacity: true)
            spareColumns.append(column)
        }
        columns.removeAll(keepingCapacity: true)
        columns.append(FieldColumnBuilder())
        dictionaries.removeAll(keepingCapacity: true)
    }

    mutating func add(_ payload: ArraySlice<UInt8>) {
        tokens.removeAll(keepingCapacity: true)
        let parsed = payload.withUnsafeBytes { bytes in
            Self.parse(bytes, from: 0, to: bytes.count, depth: 1, into: &tokens)
        }
        guard parsed else {
            shape.append(0)
            columns[column(.opaque, 0, 0, under: FieldPlaces.root)].appendBytes(payload)
            return
        }
        shape.append(1)
        payload.withUnsafeBytes { emit($0) }
        shape.append(0)
    }

    /// The field form: `head` (the raw payload before its lengths column), then the columns;
    /// nil when the payloads would need more columns than a form may have.
    func finish<C: Collection>(head: C) -> [UInt8]? where C.Element == UInt8 {
        var form: [UInt8] = []
        var columnBytes: [UInt8] = []
        return finish(head: head, into: &form, columns: &columnBytes) ? form : nil
    }

    /// ``finish(head:)`` into `form`, with `columnBytes` as room to encode the columns in
    /// (both emptied first, their capacity kept); false when there are too many columns.
    func finish<C: Collection>(head: C, into form: inout [UInt8], columns columnBytes: inout [UInt8]) -> Bool
    where C.Element == UInt8 {
        guard columns.count <= WireFormat.maxColumns else { return false }
        columnBytes.removeAll(keepingCapacity: true)
        var ends = [shape.count]
        ends.reserveCapacity(columns.count)
        columnBytes.append(contentsOf: shape)
        for (index, column) in columns.enumerated().dropFirst() {
            column.encode(isBytes: places.columnHoldsBytes[index], into: &columnBytes)
            ends.append(columnBytes.count)
        }
        form.removeAll(keepingCapacity: true)
        form.reserveCapacity(head.count + columnBytes.count + 16 + 4 * ends.count)
        form.appendVarint(UInt64(head.count))
        form.append(contentsOf: head)
        form.appendVarint(UInt64(ends.count))
        var previous = 0
        for end in ends {
            form.appendVarint(UInt64(end - previous))
            previous = end
        }
        form.append(contentsOf: columnBytes)
        return true
    }

    // MARK: Writing

    private mutating func column(_ role: FieldPlaces.Role, _ tag: UInt32, _ kind: UInt8, under parent: Int, marker: Int = 0) -> Int {
        let column = places.column(.init(tag: tag, kind: kind, role: role, marker: marker), under: parent)
        if column == columns.count { columns.append(spareColumns.popLast() ?? FieldColumnBuilder()) }
        return column
    }

    private mutating func emit(_ payload: UnsafeRawBufferPointer) {
        parents.removeAll(keepingCapacity: true)
        parents.append(FieldPlaces.root)
        decimals.removeAll(keepingCapacity: true)
        decimalBases.removeAll(keepingCapacity: true)
        decimalBases.append(0)
        for token in tokens {
            let parent = parents[parents.count - 1]
            switch token.kind {
            case .end:
                shape.append(0)
                parents.removeLast()
                decimals.removeSubrange(decimalBases.removeLast()...)
                continue
            case .number:
                shape.appendVarint(UInt64(token.tag))
                columns[column(.numeric, token.tag, 0, under: parent)].numbers.append(token.value)
                continue
            default:
                break
            }
            shape.appendVarint(UInt64(token.tag))
            let bytes = UnsafeRawBufferPointer(rebasing: payload[token.start..<token.end])
            switch token.kind {
            case .message:
                shape.append(WireFormat.Kind.message.rawValue)
                parents.append(places.place(.init(tag: token.tag, kind: 1, role: .message, marker: 0), under: parent))
                decimalBases.append(decimals.count)
            case .bytes:
                shape.append(WireFormat.Kind.bytes.rawValue)
                columns[column(.bytes, token.tag, 2, under: parent)].appendBytes(bytes)
            case .decimal:
                shape.append(WireFormat.Kind.decimal.rawValue)
                columns[column(.decimal, token.tag, 3, under: parent)].numbers.append(token.value)
                decimals.append(token.start..<token.end)
            case .words:
                shape.append(WireFormat.Kind.words.rawValue)
                emitWords(bytes, tag: token.tag, under: parent)
            case .template:
                shape.append(WireFormat.Kind.template.rawValue)
                emitTemplate(payload, token.start..<token.end, tag: token.tag, under: parent)
            case .number, .end:
                break
            }
        }
    }

    private mutating func emitWords(_ text: UnsafeRawBufferPointer, tag: UInt32, under parent: Int) {
        var count: UInt64 = 1
        for byte in text where byte == 0x20 { count += 1 }
        columns[column(.wordCount, tag, 4, under: parent)].numbers.append(count)
        let indexColumn = column(.wordIndex, tag, 4, under: parent)
        while dictionaries.count <= indexColumn { dictionaries.append(WordDictionary()) }
        var start = 0
        while start <= text.count {
            var end = start
            while end < text.count, text[end] != 0x20 { end += 1 }
            let word = UnsafeRawBufferPointer(rebasing: text[start..<end])
            let (index, isNew) = dictionaries[indexColumn].index(of: word)
            columns[indexColumn].numbers.append(index)
            if isNew { columns[column(.newWord, tag, 4, under: parent)].appendBytes(word) }
            start = end + 1
        }
    }

    private mutating func emitTemplate(_ payload: UnsafeRawBufferPointer, _ range: Range<Int>, tag: UInt32, under parent: Int) {
        let templateColumn = column(.template, tag, 5, under: parent)
        template.removeAll(keepingCapacity: true)
        let classes = ByteClass.table
        var marker = 0
        var position = range.lowerBound
        let base = decimalBases[decimalBases.count - 1]
        while position < range.upperBound {
            // Copy up to the next run of [0-9a-f] (its start is the only place a number can start).
            var literalEnd = position
            while literalEnd < range.upperBound, classes[Int(payload[literalEnd])] & ByteClass.hex == 0 { literalEnd += 1 }
            if literalEnd > position {
                template.appendBytes(payload, position..<literalEnd)
                position = literalEnd
                continue
            }
            guard let run = Self.numberRun(payload, at: position, in: range) else {
                // A run that is no number stays text, whole.
                var runEnd = position
                while runEnd < range.upperBound, classes[Int(payload[runEnd])] & ByteClass.hex != 0 { runEnd += 1 }
                template.appendBytes(payload, position..<runEnd)
                position = runEnd
                continue
            }
            let digits = UnsafeRawBufferPointer(rebasing: payload[position..<run.end])
            if run.isDecimal {
                var earlier: Int? = nil
                for index in base..<decimals.count where index - base <= 255 {
                    if decimals[index].count == digits.count,
                        memcmp(payload.baseAddress! + decimals[index].lowerBound, digits.baseAddress!, digits.count) == 0
                    {
                        earlier = index - base
                        break
                    }
                }
                if let earlier {
                    template.append(WireFormat.repeatMarker)
                    template.append(UInt8(earlier))
                } else {
                    template.append(WireFormat.decimalMarker)
                    columns[column(.markerDecimal, tag, 5, under: parent, marker: marker)].numbers.append(run.value)
                }
            } else {
                template.append(WireFormat.hexMarker)
                template.append(UInt8(digits.count))
                columns[column(.markerHex, tag, 5, under: parent, marker: marker)].numbers.append(run.value)
            }
            marker += 1
            position = run.end
        }
        columns[templateColumn].appendBytes(template)
    }
}

/// Byte classes for the text checks: a table lookup instead of comparisons on every byte.
enum ByteClass {
    static let letter: UInt8 = 0x01
    static let hex: UInt8 = 0x02
    static let table: [UInt8] = (0...255).map { byte -> UInt8 in
        if (0x30...0x39).contains(byte) { return hex }
        if (0x61...0x66).contains(byte) { return hex | letter }
        return 0
    }
}

extension ByteClass {
    /// Whether any byte is below 0x20, eight at a time: a nested message's bytes are checked
    /// once for each message around them. (A byte below 0x20 sets its top bit in
    /// `word - 0x2020…` only where its own top bit was clear.)
    static func hasControlByte(_ field: UnsafeRawBufferPointer) -> Bool {
        guard let base = field.baseAddress else { return false }
        let count = field.count
        var position = 0
        while position + 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            if (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            position += 8
        }
        while position < count {
            if base.load(fromByteOffset: position, as: UInt8.self) < 0x20 { return true }
            position += 1
        }
        return false
    }
}

/// The words a words field has named in a block: an open-addressing table of their FNV-1a
/// hashes (a Swift dictionary would hash each key again with SipHash), every hit checked byte
/// for byte.
struct WordDictionary {
    /// Per slot: a word's index + 1, or 0 for none. Never more than half full.
    private var slots = [UInt32](repeating: 0, count: 64)
    private var hashes: [UInt64] = []
    private var starts: [Int] = [0]
    private var text: [UInt8] = []

    /// The word's index, and whether it was new (then it has the next index).
    mutating func index(of word: UnsafeRawBufferPointer) -> (UInt64, Bool) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in word { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        var slot = self.slot(hash)
        while slots[slot] != 0 {
            let index = Int(slots[slot] - 1)
            if hashes[index] == hash, isWord(index, word) { return (UInt64(index), false) }
            slot = (slot + 1) & (slots.count - 1)
        }
        let index = hashes.count
        hashes.append(hash)
        text.append(contentsOf: word)
        starts.append(text.count)
        slots[slot] = UInt32(index + 1)
        if hashes.count * 2 > slots.count { grow() }
        return (UInt64(index), true)
    }

    @inline(__always)
    private func slot(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash ^ hash >> 32) & (slots.count - 1) }

    private func isWord(_ index: Int, _ word: UnsafeRawBufferPointer) -> Bool {
        let start = starts[index], count = starts[index + 1] - start
        guard count == word.count else { return false }
        return count == 0 || text.withUnsafeBytes { memcmp($0.baseAddress! + start, word.baseAddress!, count) == 0 }
    }

    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        for (index, hash) in hashes.enumerated() {
            var slot = self.slot(hash)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = UInt32(index + 1)
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `range` of `bytes`: the typed buffer takes the standard library's plain copy,
    /// where a raw buffer's slice goes through the general sequence path.
    @inline(__always)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        append(contentsOf: UnsafeBufferPointer(start: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count))
    }
}

// MARK: Parsing

extension FieldColumnsEncoder {
    /// Parses a message strictly (minimal varints, known wire types, whole fields) into
    /// `tokens`; false, with `tokens` as it was, when the bytes are not such a message.
    private static func parse(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, depth: Int, into tokens: inout [Token]
    ) -> Bool {
        let mark = tokens.count
        var position = start
        func fail() -> Bool {
            tokens.removeSubrange(mark...)
            return false
        }
        while position < end {
            guard let tagValue = minimalVarint(bytes, &position, end: end), tagValue >> 3 >= 1, tagValue <= UInt64(UInt32.max)
            else { return fail() }
            let tag = UInt32(tagValue)
            switch tag & 7 {
            case WireFormat.varint:
                guard let value = minimalVarint(bytes, &position, end: end) else { return fail() }
                tokens.append(Token(kind: .number, tag: tag, value: value))
            case WireFormat.fixed64:
                guard end - position >= 8 else { return fail() }
                tokens.append(Token(kind: .number, tag: tag, value: UInt64(littleEndianBytes: bytes, at: position)))
                position += 8
            case WireFormat.fixed32:
                guard end - position >= 4 else { return fail() }
                tokens.append(Token(kind: .number, tag: tag, value: UInt64(UInt32(littleEndianBytes: bytes, at: position))))
                position += 4
            case WireFormat.lengthDelimited:
                guard let length = minimalVarint(bytes, &position, end: end), length <= UInt64(end - position) else { return fail() }
                let fieldEnd = position + Int(length)
                addLengthDelimited(bytes, tag: tag, position..<fieldEnd, depth: depth, into: &tokens)
                position = fieldEnd
            default:
                return fail()
            }
        }
        return true
    }

    private static func addLengthDelimited(
        _ bytes: UnsafeRawBufferPointer, tag: UInt32, _ range: Range<Int>, depth: Int, into tokens: inout [Token]
    ) {
        let field = UnsafeRawBufferPointer(rebasing: bytes[range])
        if ByteClass.hasControlByte(field) {
            // Binary, not text: a message if it parses as one, else kept whole (a digest).
            if depth < WireFormat.maxDepth {
                tokens.append(Token(kind: .message, tag: tag))
                if parse(bytes, from: range.lowerBound, to: range.upperBound, depth: depth + 1, into: &tokens) {
                    tokens.append(Token(kind: .end, tag: 0))
                    return
                }
                tokens.removeLast()
            }
            tokens.append(Token(kind: .bytes, tag: tag, start: range.lowerBound, end: range.upperBound))
            return
        }
        let kind = classifyText(field)
        var value: UInt64 = 0
        if kind == .decimal {
            for byte in field { value = value * 10 + UInt64(byte - 0x30) }
        }
        tokens.append(Token(kind: kind, tag: tag, value: value, start: range.lowerBound, end: range.upperBound))
    }

    /// Decimal, words, a template or bytes, in one pass: decimal when it is one canonical
    /// number; words when spaces split it into non-empty words; else a template when it holds a
    /// number and no byte below 4.
    private static func classifyText(_ field: UnsafeRawBufferPointer) -> Token.Kind {
        guard let base = field.baseAddress, !field.isEmpty else { return .bytes }
        let classes = ByteClass.table
        var spaces = 0
        var doubleSpace = false
        var low = false
        var number = false
        var previous: UInt8 = 0
        var runStart = -1
        var runLetters = 0
        var position = 0
        let count = field.count
        while position < count {
            let byte = base.load(fromByteOffset: position, as: UInt8.self)
            let kind = classes[Int(byte)]
            if kind & ByteClass.hex != 0 {
                if runStart < 0 {
                    runStart = position
                    runLetters = 0
                }
                runLetters &+= Int(kind & ByteClass.letter)
            } else {
                if runStart >= 0 {
                    number = number || isNumber(base, runStart, position, letters: runLetters)
                    runStart = -1
                }
                if byte == 0x20 {
                    spaces += 1
                    doubleSpace = doubleSpace || previous == 0x20
                } else if byte < 0x04 {
                    low = true
                }
            }
            previous = byte
            position += 1
        }
        if runStart >= 0 {
            let whole = isNumber(base, runStart, count, letters: runLetters)
            if whole, runStart == 0, runLetters == 0 { return .decimal }
            number = number || whole
        }
        if spaces > 0, !doubleSpace, field.first != 0x20, field.last != 0x20 { return .words }
        if number, !low { return .template }
        return .bytes
    }

    /// Whether a maximal run of `[0-9a-f]` is a number a template lifts out.
    @inline(__always)
    private static func isNumber(_ base: UnsafeRawPointer, _ start: Int, _ end: Int, letters: Int) -> Bool {
        let length = end - start
        if letters == 0 { return length <= 19 && (length == 1 || base.load(fromByteOffset: start, as: UInt8.self) != 0x30) }
        return length >= 4 && length <= 16 && letters < length
    }

    /// The number a template lifts out at `position`, if one starts there: a maximal run of
    /// `[0-9a-f]` inside `field` (the byte before is not one) that is a canonical decimal of at
    /// most 19 digits, or 4 to 16 characters with a digit and a letter.
    static func numberRun(
        _ bytes: UnsafeRawBufferPointer, at position: Int, in field: Range<Int>
    ) -> (end: Int, value: UInt64, isDecimal: Bool)? {
        let classes = ByteClass.table
        let end = field.upperBound
        guard position < end, classes[Int(bytes[position])] & ByteClass.hex != 0,
            position == field.lowerBound || classes[Int(bytes[position - 1])] & ByteClass.hex == 0
        else { return nil }
        var runEnd = position
        var letters = 0
        var decimal: UInt64 = 0
        var hex: UInt64 = 0
        while runEnd < end {
            let byte = bytes[runEnd]
            let kind = classes[Int(byte)]
            guard kind & ByteClass.hex != 0 else { break }
            if kind & ByteClass.letter != 0 {
                letters += 1
                hex = hex &<< 4 | UInt64(byte - 0x61 + 10)
            } else {
                decimal = decimal &* 10 &+ UInt64(byte - 0x30)
                hex = hex &<< 4 | UInt64(byte - 0x30)
            }
            runEnd += 1
        }
        guard isNumber(bytes.baseAddress!, position, runEnd, letters: letters) else { return nil }
        return letters == 0 ? (runEnd, decimal, true) : (runEnd, hex, false)
    }

    /// A varint that uses no more bytes than its value needs; nil otherwise or when cut short.
    @inline(__always)
    private static func minimalVarint(_ bytes: UnsafeRawBufferPointer, _ position: inout Int, end: Int) -> UInt64? {
        var cursor = ByteCursor(UnsafeRawBufferPointer(rebasing: bytes[..<end]), position: position)
        guard let value = cursor.readVarint() else { return nil }
        let used = cursor.position - position
        guard used == 1 || bytes[cursor.position - 1] != 0 else { return nil }
        position = cursor.position
        return value
    }
}
