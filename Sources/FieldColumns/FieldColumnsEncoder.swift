import EventLog
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

    struct Token {
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
