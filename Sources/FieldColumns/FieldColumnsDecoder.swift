import EventLog
import Foundation

/// Rebuilds a block's raw payload from codec 2's field form (FORMAT.md, "Codec 2: field
/// columns"). Any rule broken is damage: the form comes out of a block whose checksum held, so
/// a broken rule means a bad writer or a bug, never a torn write.
///
/// ```swift
/// let raw = try FieldColumnsDecoder.rebuild(form, count: 4096, rawLength: header.rawLength).get()
/// ```
///
/// The payloads are written through a pointer into the raw payload's buffer: every event
/// rebuilds dozens of small fields, and an array's checks on each append cost more than the
/// fields themselves.
struct FieldColumnsDecoder {
    let form: UnsafeRawBufferPointer
    private var places = FieldPlaces()
    private let ranges: [Range<Int>]
    private let readers: UnsafeMutableBufferPointer<FieldColumnReader>
    private let loaded: UnsafeMutableBufferPointer<Bool>
    private var shape: ByteCursor
    /// Per column: the words a word index column has named so far.
    private var words: [[Range<Int>]]
    // Not private: FieldColumnsDecoder+Writing.swift writes the payloads through these.
    /// The decimals of the messages being rebuilt (ranges of `out`), innermost last.
    var decimals: [Range<Int>] = []
    /// Every payload back to back, as it is rebuilt, in the raw payload's buffer after room
    /// for its head; never more than `capacity` bytes.
    let out: UnsafeMutablePointer<UInt8>
    let capacity: Int
    var count = 0

    static func rebuild(_ form: UnsafeRawBufferPointer, count: Int, rawLength: Int) -> Result<[UInt8], DamageReason> {
        do throws(DamageReason) {
            var cursor = ByteCursor(form)
            guard let headLength = cursor.readVarint(), headLength <= UInt64(cursor.remaining) else {
                throw DamageReason("a field form whose head is cut short")
            }
            let head = cursor.position..<cursor.position + Int(headLength)
            cursor.position = head.upperBound
            guard let columnCount = cursor.readVarint(), columnCount >= 1, columnCount <= UInt64(WireFormat.maxColumns) else {
                throw DamageReason("a field form whose column count is 0 or over \(WireFormat.maxColumns)")
            }
            var lengths: [Int] = []
            var total = 0
            for index in 0..<Int(columnCount) {
                guard let length = cursor.readVarint(), length <= UInt64(form.count) else {
                    throw DamageReason("column \(index)'s length is malformed")
                }
                lengths.append(Int(length))
                total += Int(length)
                guard total <= form.count else { throw DamageReason("columns that add up to more than the block holds") }
            }
            guard total == cursor.remaining else {
                throw DamageReason("columns that take \(total) bytes of the \(cursor.remaining) after the column table")
            }
            var ranges: [Range<Int>] = []
            var start = cursor.position
            for length in lengths {
                ranges.append(start..<start + length)
                start += length
            }
            guard rawLength >= head.count else { throw DamageReason("a head longer than the raw length") }
            // Each event takes at least a byte of time delta and a byte of length in the raw payload.
            guard count <= rawLength / 2 else { throw DamageReason("\(count) events in \(rawLength) raw bytes") }
            // The payloads are rebuilt straight into the raw payload's own buffer, after room
            // for the head, and moved up once at the end to make room for their lengths.
            var failure: DamageReason?
            let raw = [UInt8](unsafeUninitializedCapacity: max(rawLength, 1)) { buffer, initialized in
                initialized = 0
                // The buffer is most often the one the reading thread has just let go of, its
                // lines still in the other core's cache. Zeroing it first takes them over in one
                // streaming pass; rebuilding into it directly took each as a stall of its own,
                // and the rebuild cost 400 ns an event instead of 250 whenever the other core
                // was busy decoding (docs/BENCHMARKS-JOURNAL.md, "Cold replay at 2.5 M events/s").
                buffer.baseAddress!.initialize(repeating: 0, count: rawLength)
                do throws(DamageReason) {
                    try rebuild(
                        form, head: head, ranges: ranges, count: count,
                        into: UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: rawLength))
                    initialized = rawLength
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            return .success(raw)
        } catch {
            return .failure(DamageReason("a field form with \(error.description)"))
        }
    }

    /// Fills `raw` (exactly the raw length): the head, the lengths column, the payloads.
    private static func rebuild(
        _ form: UnsafeRawBufferPointer, head: Range<Int>, ranges: [Range<Int>], count: Int, into raw: UnsafeMutableRawBufferPointer
    ) throws(DamageReason) {
        let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var decoder = FieldColumnsDecoder(form: form, out: base + head.count, capacity: raw.count - head.count, ranges: ranges)
        defer { decoder.deallocate() }
        var ends: [Int] = []
        ends.reserveCapacity(count)
        for _ in 0..<count {
            try decoder.event()
            ends.append(decoder.count)
        }
        try decoder.checkUsedUp()
        var lengthsSize = 0
        var previous = 0
        for end in ends {
            lengthsSize += UInt64(end - previous).varintSize
            previous = end
        }
        let size = head.count + lengthsSize + decoder.count
        guard size == raw.count else {
            throw DamageReason("a field form that rebuilds \(size) bytes, not the raw length \(raw.count)")
        }
        UnsafeMutableRawPointer(base + head.count + lengthsSize).copyMemory(from: base + head.count, byteCount: decoder.count)
        UnsafeMutableRawPointer(base).copyMemory(from: form.baseAddress! + head.lowerBound, byteCount: head.count)
        var at = head.count
        previous = 0
        for end in ends {
            var rest = UInt64(end - previous)
            while rest >= 0x80 {
                base[at] = UInt8(truncatingIfNeeded: rest) | 0x80
                at += 1
                rest >>= 7
            }
            base[at] = UInt8(rest)
            at += 1
            previous = end
        }
    }

    private init(form: UnsafeRawBufferPointer, out: UnsafeMutablePointer<UInt8>, capacity: Int, ranges: [Range<Int>]) {
        self.form = form
        self.ranges = ranges
        self.capacity = capacity
        self.out = out
        readers = .allocate(capacity: ranges.count)
        readers.initialize(repeating: FieldColumnReader())
        loaded = .allocate(capacity: ranges.count)
        loaded.initialize(repeating: false)
        loaded[0] = true
        words = Array(repeating: [], count: ranges.count)
        shape = ByteCursor(UnsafeRawBufferPointer(rebasing: form[ranges[0]]))
    }

    private func deallocate() {
        readers.deinitialize()
        readers.deallocate()
        loaded.deallocate()
    }

    private mutating func event() throws(DamageReason) {
        switch try shapeByte() {
        case 0:
            let column = try self.column(.opaque, tag: 0, kind: 0, under: FieldPlaces.root)
            try putForm(try readers[column].bytes())
        case 1:
            try message(FieldPlaces.root, depth: 1)
        case let other:
            throw DamageReason("an event of unknown form \(other)")
        }
    }

    private mutating func message(_ place: Int, depth: Int) throws(DamageReason) {
        let decimalsBase = decimals.count
        defer { if decimals.count > decimalsBase { decimals.removeLast(decimals.count - decimalsBase) } }
        while true {
            guard let tagValue = shape.readVarint() else { throw DamageReason("a shape cut short") }
            if tagValue == 0 { return }
            guard tagValue >> 3 >= 1, tagValue <= UInt64(UInt32.max) else { throw DamageReason("a field tag of \(tagValue)") }
            let tag = UInt32(tagValue)
            try putVarint(tagValue)
            switch tag & 7 {
            case WireFormat.varint:
                try putVarint(try number(.numeric, tag: tag, kind: 0, under: place))
            case WireFormat.fixed64:
                try putLittleEndian(try number(.numeric, tag: tag, kind: 0, under: place), bytes: 8)
            case WireFormat.fixed32:
                try putLittleEndian(try number(.numeric, tag: tag, kind: 0, under: place), bytes: 4)
            case WireFormat.lengthDelimited:
                let kindByte = try shapeByte()
                guard let kind = WireFormat.Kind(rawValue: kindByte) else { throw DamageReason("a field of unknown kind \(kindByte)") }
                switch kind {
                case .message:
                    guard depth < WireFormat.maxDepth else { throw DamageReason("messages nested more than 16 deep") }
                    let child = places.place(.init(tag: tag, kind: kind.rawValue, role: .message, marker: 0), under: place)
                    let start = try openLength()
                    try message(child, depth: depth + 1)
                    try closeLength(start)
                case .bytes:
                    let column = try self.column(.bytes, tag: tag, kind: kind.rawValue, under: place)
                    let value = try readers[column].bytes()
                    try putVarint(UInt64(value.count))
                    try putForm(value)
                case .decimal:
                    let value = try number(.decimal, tag: tag, kind: kind.rawValue, under: place)
                    let digits = try Self.digits(value)
                    try putVarint(UInt64(digits))
                    try putDecimal(value, digits: digits)
                    decimals.append(count - digits..<count)
                case .words:
                    let start = try openLength()
                    try words(tag: tag, under: place)
                    try closeLength(start)
                case .template:
                    let start = try openLength()
                    try template(tag: tag, under: place, decimalsBase: decimalsBase)
                    try closeLength(start)
                }
            default:
                throw DamageReason("a field of wire type \(tag & 7)")
            }
        }
    }

    private mutating func words(tag: UInt32, under place: Int) throws(DamageReason) {
        let kind = WireFormat.Kind.words.rawValue
        let total = try number(.wordCount, tag: tag, kind: kind, under: place)
        guard total >= 1 else { throw DamageReason("a words field of no words") }
        let indexColumn = try column(.wordIndex, tag: tag, kind: kind, under: place)
        for position in 0..<total {
            let index = try readers[indexColumn].number()
            if index == UInt64(words[indexColumn].count) {
                let column = try self.column(.newWord, tag: tag, kind: kind, under: place)
                let word = try readers[column].bytes()
                guard !word.isEmpty, !form[word].contains(0x20) else { throw DamageReason("a new word that is empty or holds a space") }
                words[indexColumn].append(word)
            } else if index > UInt64(words[indexColumn].count) {
                throw DamageReason("word \(index) of a dictionary of \(words[indexColumn].count)")
            }
            if position > 0 { try put(0x20) }
            try putForm(words[indexColumn][Int(index)])
        }
    }

    private mutating func template(tag: UInt32, under place: Int, decimalsBase: Int) throws(DamageReason) {
        let kind = WireFormat.Kind.template.rawValue
        let text = try readers[try column(.template, tag: tag, kind: kind, under: place)].bytes()
        var position = text.lowerBound
        var marker = 0
        while position < text.upperBound {
            var literalEnd = position
            while literalEnd < text.upperBound, form[literalEnd] > WireFormat.hexMarker { literalEnd += 1 }
            if literalEnd > position {
                try putForm(position..<literalEnd)
                position = literalEnd
                continue
            }
            let byte = form[position]
            position += 1
            switch byte {
            case WireFormat.decimalMarker:
                let value = try number(.markerDecimal, tag: tag, kind: kind, under: place, marker: marker)
                try putDecimal(value, digits: try Self.digits(value))
            case WireFormat.repeatMarker, WireFormat.hexMarker:
                guard position < text.upperBound else { throw DamageReason("a template that ends inside a marker") }
                let argument = Int(form[position])
                position += 1
                if byte == WireFormat.repeatMarker {
                    guard argument < decimals.count - decimalsBase else {
                        throw DamageReason("a template repeating decimal \(argument) of \(decimals.count - decimalsBase)")
                    }
                    let digits = decimals[decimalsBase + argument]
                    try reserve(digits.count)
                    UnsafeMutableRawPointer(out + count).copyMemory(from: out + digits.lowerBound, byteCount: digits.count)
                    count += digits.count
                } else {
                    guard (1...16).contains(argument) else { throw DamageReason("a hex number of \(argument) digits") }
                    let value = try number(.markerHex, tag: tag, kind: kind, under: place, marker: marker)
                    guard argument == 16 || value >> UInt64(4 * argument) == 0 else {
                        throw DamageReason("a hex number that does not fit its \(argument) digits")
                    }
                    try reserve(argument)
                    for digit in 0..<argument {
                        let nibble = UInt8(truncatingIfNeeded: value >> UInt64(4 * (argument - 1 - digit))) & 0x0F
                        out[count + digit] = nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
                    }
                    count += argument
                }
            default:
                throw DamageReason("a template byte \(byte) below 4 that is no marker")
            }
            marker += 1
        }
    }

    // MARK: Columns

    @inline(__always)
    private mutating func column(
        _ role: FieldPlaces.Role, tag: UInt32, kind: UInt8, under place: Int, marker: Int = 0
    ) throws(DamageReason) -> Int {
        let column = places.column(.init(tag: tag, kind: kind, role: role, marker: marker), under: place)
        guard column < ranges.count else { throw DamageReason("a shape that uses more columns than the \(ranges.count) it has") }
        if !loaded[column] {
            readers[column] = try FieldColumnReader(form, range: ranges[column], isBytes: places.columnHoldsBytes[column], limit: capacity + 1)
            loaded[column] = true
        }
        return column
    }

    @inline(__always)
    private mutating func number(
        _ role: FieldPlaces.Role, tag: UInt32, kind: UInt8, under place: Int, marker: Int = 0
    ) throws(DamageReason) -> UInt64 {
        try readers[try column(role, tag: tag, kind: kind, under: place, marker: marker)].number()
    }

    @inline(__always)
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
            throw DamageReason("column \(column) with values or bytes left over")
        }
    }
}
