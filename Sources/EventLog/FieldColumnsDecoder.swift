/// Rebuilds a block's raw payload from codec 2's field form (FORMAT.md, "Codec 2: field
/// columns"). Any rule broken is damage: the form comes out of a block whose checksum held, so
/// a broken rule means a bad writer or a bug, never a torn write.
///
/// ```swift
/// let raw = try FieldColumnsDecoder.rebuild(form, count: 4096, rawLength: header.rawLength).get()
/// ```
struct FieldColumnsDecoder {
    private let form: UnsafeRawBufferPointer
    private let rawLength: Int
    private var places = FieldPlaces()
    private var ranges: [Range<Int>] = []
    private var readers: [FieldColumnReader] = []
    private var loaded: [Bool] = []
    private var shape: ByteCursor
    /// Per column: the words a word index column has named so far.
    private var words: [[Range<Int>]] = []
    /// The decimals of the messages being rebuilt (ranges of `payloads`), innermost last.
    private var decimals: [Range<Int>] = []
    /// Every payload back to back, as it is rebuilt.
    private var payloads: [UInt8] = []

    static func rebuild(_ form: UnsafeRawBufferPointer, count: Int, rawLength: Int) -> Result<[UInt8], DamageReason> {
        do throws(DamageReason) {
            var cursor = ByteCursor(form)
            guard let headLength = cursor.readVarint(), headLength <= UInt64(cursor.remaining) else {
                throw DamageReason("a field form whose head is cut short")
            }
            let head = cursor.position..<cursor.position + Int(headLength)
            cursor.position = head.upperBound
            guard let columnCount = cursor.readVarint(), columnCount >= 1, columnCount <= UInt64(cursor.remaining) else {
                throw DamageReason("a field form without a valid column count")
            }
            var ranges: [Range<Int>] = []
            var total = 0
            for index in 0..<Int(columnCount) {
                guard let length = cursor.readVarint(), length <= UInt64(form.count) else {
                    throw DamageReason("column \(index)'s length is malformed")
                }
                ranges.append(total..<total + Int(length))
                total += Int(length)
                guard total <= form.count else { throw DamageReason("columns that add up to more than the block holds") }
            }
            guard total == cursor.remaining else {
                throw DamageReason("columns that take \(total) bytes of the \(cursor.remaining) after the column table")
            }
            ranges = ranges.map { ($0.lowerBound + cursor.position)..<($0.upperBound + cursor.position) }
            var decoder = FieldColumnsDecoder(form: form, rawLength: rawLength, ranges: ranges)
            var lengths: [Int] = []
            lengths.reserveCapacity(count)
            for _ in 0..<count {
                let start = decoder.payloads.count
                try decoder.event()
                lengths.append(decoder.payloads.count - start)
            }
            try decoder.checkUsedUp()
            var size = head.count + decoder.payloads.count
            for length in lengths { size += UInt64(length).varintSize }
            guard size == rawLength else {
                throw DamageReason("a field form that rebuilds \(size) bytes, not the raw length \(rawLength)")
            }
            var raw: [UInt8] = []
            raw.reserveCapacity(size)
            raw.append(contentsOf: form[head])
            for length in lengths { raw.appendVarint(UInt64(length)) }
            raw.append(contentsOf: decoder.payloads)
            return .success(raw)
        } catch {
            return .failure(DamageReason("a field form with \(error.description)"))
        }
    }

    private init(form: UnsafeRawBufferPointer, rawLength: Int, ranges: [Range<Int>]) {
        self.form = form
        self.rawLength = rawLength
        self.ranges = ranges
        readers = Array(repeating: FieldColumnReader(), count: ranges.count)
        loaded = Array(repeating: false, count: ranges.count)
        words = Array(repeating: [], count: ranges.count)
        loaded[0] = true
        shape = ByteCursor(UnsafeRawBufferPointer(rebasing: form[ranges[0]]))
        payloads.reserveCapacity(rawLength)
    }

    private mutating func event() throws(DamageReason) {
        switch try shapeByte() {
        case 0:
            let column = try self.column(.opaque, tag: 0, kind: 0, under: FieldPlaces.root)
            appendForm(try readers[column].bytes())
        case 1:
            try message(FieldPlaces.root, depth: 1)
        case let other:
            throw DamageReason("an event of unknown form \(other)")
        }
        guard payloads.count <= rawLength else { throw DamageReason("payloads longer than the raw length") }
    }

    private mutating func message(_ place: Int, depth: Int) throws(DamageReason) {
        let decimalsBase = decimals.count
        defer { decimals.removeSubrange(decimalsBase...) }
        while true {
            guard let tagValue = shape.readVarint() else { throw DamageReason("a shape cut short") }
            if tagValue == 0 { return }
            guard tagValue >> 3 >= 1, tagValue <= UInt64(UInt32.max) else { throw DamageReason("a field tag of \(tagValue)") }
            let tag = UInt32(tagValue)
            payloads.appendVarint(tagValue)
            switch tag & 7 {
            case WireFormat.varint:
                payloads.appendVarint(try number(.numeric, tag: tag, kind: 0, under: place))
            case WireFormat.fixed64:
                payloads.appendLittleEndian(try number(.numeric, tag: tag, kind: 0, under: place))
            case WireFormat.fixed32:
                payloads.appendLittleEndian(UInt32(truncatingIfNeeded: try number(.numeric, tag: tag, kind: 0, under: place)))
            case WireFormat.lengthDelimited:
                let kindByte = try shapeByte()
                guard let kind = WireFormat.Kind(rawValue: kindByte) else { throw DamageReason("a field of unknown kind \(kindByte)") }
                let start = payloads.count
                switch kind {
                case .message:
                    guard depth < WireFormat.maxDepth else { throw DamageReason("messages nested more than 16 deep") }
                    let child = places.place(.init(tag: tag, kind: kind.rawValue, role: .message, marker: 0), under: place)
                    try message(child, depth: depth + 1)
                case .bytes:
                    let column = try self.column(.bytes, tag: tag, kind: kind.rawValue, under: place)
                    appendForm(try readers[column].bytes())
                case .decimal:
                    try appendDecimal(try number(.decimal, tag: tag, kind: kind.rawValue, under: place))
                case .words:
                    try words(tag: tag, under: place)
                case .template:
                    try template(tag: tag, under: place, decimalsBase: decimalsBase)
                }
                let length = payloads.count - start
                insertLength(of: start)
                if kind == .decimal { decimals.append(payloads.count - length..<payloads.count) }
            default:
                throw DamageReason("a field of wire type \(tag & 7)")
            }
            guard payloads.count <= rawLength else { throw DamageReason("payloads longer than the raw length") }
        }
    }

    private mutating func words(tag: UInt32, under place: Int) throws(DamageReason) {
        let count = try number(.wordCount, tag: tag, kind: WireFormat.Kind.words.rawValue, under: place)
        guard count >= 1 else { throw DamageReason("a words field of no words") }
        let indexColumn = try column(.wordIndex, tag: tag, kind: WireFormat.Kind.words.rawValue, under: place)
        for position in 0..<count {
            let index = try readers[indexColumn].number()
            if index == UInt64(words[indexColumn].count) {
                let column = try self.column(.newWord, tag: tag, kind: WireFormat.Kind.words.rawValue, under: place)
                let word = try readers[column].bytes()
                guard !word.isEmpty, !form[word].contains(0x20) else { throw DamageReason("a new word that is empty or holds a space") }
                words[indexColumn].append(word)
            } else if index > UInt64(words[indexColumn].count) {
                throw DamageReason("word \(index) of a dictionary of \(words[indexColumn].count)")
            }
            if position > 0 { payloads.append(0x20) }
            appendForm(words[indexColumn][Int(index)])
            guard payloads.count <= rawLength else { throw DamageReason("payloads longer than the raw length") }
        }
    }

    private mutating func template(tag: UInt32, under place: Int, decimalsBase: Int) throws(DamageReason) {
        let kind = WireFormat.Kind.template.rawValue
        let templateColumn = try column(.template, tag: tag, kind: kind, under: place)
        let text = try readers[templateColumn].bytes()
        var position = text.lowerBound
        var marker = 0
        while position < text.upperBound {
            var literalEnd = position
            while literalEnd < text.upperBound, form[literalEnd] > WireFormat.hexMarker { literalEnd += 1 }
            if literalEnd > position {
                appendForm(position..<literalEnd)
                position = literalEnd
                continue
            }
            let byte = form[position]
            position += 1
            switch byte {
            case WireFormat.decimalMarker:
                try appendDecimal(try number(.markerDecimal, tag: tag, kind: kind, under: place, marker: marker))
            case WireFormat.repeatMarker, WireFormat.hexMarker:
                guard position < text.upperBound else { throw DamageReason("a template that ends inside a marker") }
                let argument = Int(form[position])
                position += 1
                if byte == WireFormat.repeatMarker {
                    guard argument < decimals.count - decimalsBase else {
                        throw DamageReason("a template repeating decimal \(argument) of \(decimals.count - decimalsBase)")
                    }
                    for index in decimals[decimalsBase + argument] { payloads.append(payloads[index]) }
                } else {
                    guard (1...16).contains(argument) else { throw DamageReason("a hex number of \(argument) digits") }
                    let value = try number(.markerHex, tag: tag, kind: kind, under: place, marker: marker)
                    guard argument == 16 || value >> UInt64(4 * argument) == 0 else {
                        throw DamageReason("a hex number that does not fit its \(argument) digits")
                    }
                    for digit in (0..<argument).reversed() {
                        let nibble = UInt8(truncatingIfNeeded: value >> UInt64(4 * digit)) & 0x0F
                        payloads.append(nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10)
                    }
                }
            default:
                throw DamageReason("a template byte \(byte) below 4 that is no marker")
            }
            marker += 1
        }
    }

    // MARK: Columns

    private mutating func column(
        _ role: FieldPlaces.Role, tag: UInt32, kind: UInt8, under place: Int, marker: Int = 0
    ) throws(DamageReason) -> Int {
        let column = places.column(.init(tag: tag, kind: kind, role: role, marker: marker), under: place)
        guard column < ranges.count else { throw DamageReason("a shape that uses more columns than the \(ranges.count) it has") }
        if !loaded[column] {
            readers[column] = try FieldColumnReader(form, range: ranges[column], isBytes: places.columnHoldsBytes[column], limit: rawLength)
            loaded[column] = true
        }
        return column
    }

    @inline(__always)
    private mutating func number(
        _ role: FieldPlaces.Role, tag: UInt32, kind: UInt8, under place: Int, marker: Int = 0
    ) throws(DamageReason) -> UInt64 {
        let column = try self.column(role, tag: tag, kind: kind, under: place, marker: marker)
        return try readers[column].number()
    }

    private mutating func shapeByte() throws(DamageReason) -> UInt8 {
        guard shape.remaining > 0 else { throw DamageReason("a shape cut short") }
        defer { shape.position += 1 }
        return shape.bytes[shape.position]
    }

    private func checkUsedUp() throws(DamageReason) {
        guard shape.remaining == 0 else { throw DamageReason("\(shape.remaining) bytes of shape left over") }
        guard places.columnCount == ranges.count else {
            throw DamageReason("\(ranges.count - places.columnCount) columns the shape never uses")
        }
        for column in 1..<ranges.count where !readers[column].isUsedUp {
            throw DamageReason("column \(column) with values left over")
        }
    }

    // MARK: Rendering

    @inline(__always)
    private mutating func appendForm(_ range: Range<Int>) {
        payloads.append(contentsOf: UnsafeRawBufferPointer(rebasing: form[range]))
    }

    /// A decimal has at most 19 digits (FORMAT.md, kind 3).
    private mutating func appendDecimal(_ value: UInt64) throws(DamageReason) {
        guard value < 10_000_000_000_000_000_000 else { throw DamageReason("a decimal of 20 digits") }
        var count = 1
        var power: UInt64 = 10
        while count < 19, value >= power {
            count += 1
            power &*= 10
        }
        let end = payloads.count + count
        payloads.append(contentsOf: repeatElement(0x30, count: count))
        payloads.withUnsafeMutableBufferPointer { buffer in
            var rest = value
            for index in stride(from: end - 1, through: end - count, by: -1) {
                buffer[index] = 0x30 + UInt8(rest % 10)
                rest /= 10
            }
        }
    }

    /// Puts the varint length of the field that starts at `start` in front of it.
    private mutating func insertLength(of start: Int) {
        let length = UInt64(payloads.count - start)
        if length < 0x80 {
            payloads.insert(UInt8(length), at: start)
        } else {
            var prefix: [UInt8] = []
            prefix.appendVarint(length)
            payloads.insert(contentsOf: prefix, at: start)
        }
    }
}

extension UInt64 {
    /// Bytes of this number as a varint.
    var varintSize: Int { Swift.max(1, (64 - leadingZeroBitCount + 6) / 7) }
}
