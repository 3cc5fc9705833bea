/// docs/FORMAT.md, "Codec 2: field columns", read from its text alone (not from the module's
/// code): the field form `F` of a block, once zstd has given it back, turned into the block's raw
/// payload. Every rule the section states is checked and a broken one throws
/// ``FormatRuleBroken``, so that the module's writer and this reader, written apart, can only
/// agree when both follow the document.
///
/// Where the section leaves a choice open, the choice made here is named at the place it is
/// made ("Reading:"), so that a disagreement with the module points at a sentence.
enum IndependentFieldColumns: FormatBytes {
    /// "at most 16 messages deep".
    static let maxDepth = 16
    /// "1 to 19 ASCII digits": the largest decimal a kind-3 field (and a `0x01` marker) holds.
    static let maxDecimal: UInt64 = 9_999_999_999_999_999_999

    /// What a column's values are for, one of the section's roles.
    enum Role: Hashable {
        case opaque, numeric, bytes, decimal, wordCount, wordIndex, newWord, template
        /// `index` counts every marker of the template from 0, `0x02` included ("counting all
        /// three kinds"), though `0x02` itself takes no column.
        case marker(index: Int, byte: UInt8)

        /// Bytes columns carry lengths and then bytes; the others carry numbers.
        var isBytes: Bool {
            switch self {
            case .opaque, .bytes, .newWord, .template: true
            default: false
            }
        }
    }

    /// "A column belongs to a place": the tags from the payload's top down to the field, the
    /// field's kind (0 for wire types 0, 1 and 5, which have none) and the role.
    struct Place: Hashable {
        var tags: [UInt64]
        var kind: UInt8
        var role: Role
    }

    /// The raw payload `F` stands for.
    static func rebuild(_ f: [UInt8], eventCount: Int, rawLength: Int) throws -> [UInt8] {
        try rebuildWithHead(f, eventCount: eventCount, rawLength: rawLength).raw
    }

    /// The raw payload; how many of its first bytes are `head` ("the raw payload up to its
    /// lengths column"), which the block's reader checks against the time deltas it parses; and
    /// which parts of the section the form used ("kind 4", "marker 3", "mode 1", …), so that a
    /// test of real stores can tell that the writer's choices reached every rule.
    static func rebuildWithHead(
        _ f: [UInt8], eventCount: Int, rawLength: Int
    ) throws -> (raw: [UInt8], headLength: Int, seen: Set<String>) {
        try check(eventCount >= 1, "a block of at least one event")
        var position = 0
        let headLength = try varint(f, &position)
        try check(headLength <= UInt64(f.count - position), "a head within the field form")
        let head = Array(f[position..<position + Int(headLength)])
        position += Int(headLength)
        let columnCount = try varint(f, &position)
        try check(columnCount >= 1, "a column_count of at least 1")
        // Each length takes at least one byte, so more columns than bytes left cannot be.
        try check(columnCount <= UInt64(f.count - position), "column_lengths within the field form")
        var lengths: [Int] = []
        for _ in 0..<Int(columnCount) {
            let length = try varint(f, &position)
            try check(length <= UInt64(f.count), "a column no longer than the field form")
            lengths.append(Int(length))
        }
        var columns: [Range<Int>] = []
        for length in lengths {
            try check(length <= f.count - position, "a column that ends within the field form")
            columns.append(position..<position + length)
            position += length
        }
        try check(position == f.count, "columns that end exactly at the end of F")

        var decoder = Decoder(f: f, columns: columns, rawLength: rawLength)
        var payloads: [[UInt8]] = []
        for _ in 0..<eventCount {
            payloads.append(try decoder.payload())
        }
        try decoder.finish()

        var raw = head
        for payload in payloads { raw += minimalVarint(UInt64(payload.count)) }
        for payload in payloads { raw += payload }
        try check(raw.count == rawLength, "a rebuilt raw payload of exactly raw_length (\(raw.count) vs \(rawLength))")
        return (raw, head.count, decoder.seen)
    }

    static func minimalVarint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    /// One column's values once read, and how many of them the shape has used.
    struct Column {
        var numbers: [UInt64] = []
        var bytes: [Range<Int>] = []
        var used = 0
        var count: Int
    }

    /// The shape's reading position, the columns met so far, and each words field's words.
    struct Decoder: FormatBytes {
        let f: [UInt8]
        let ranges: [Range<Int>]
        let rawLength: Int
        var shape: Int
        var places: [Place: Int] = [:]
        var columns: [Int: Column] = [:]
        /// "the number of words the field has had so far in the block": Reading: the field's
        /// distinct words, in the order they were new, which an index points into.
        var words: [[UInt64]: [[UInt8]]] = [:]
        var seen: Set<String> = []

        init(f: [UInt8], columns: [Range<Int>], rawLength: Int) {
            self.f = f
            ranges = columns
            self.rawLength = rawLength
            shape = columns[0].lowerBound
        }

        mutating func shapeByte() throws -> UInt8 {
            try Self.check(shape < ranges[0].upperBound, "a shape that is not read past its end")
            defer { shape += 1 }
            return f[shape]
        }

        mutating func shapeVarint() throws -> UInt64 {
            try Self.varint(f, &shape, end: ranges[0].upperBound)
        }

        /// One event's payload: form 0 kept whole, form 1 a message.
        mutating func payload() throws -> [UInt8] {
            let form = try shapeByte()
            seen.insert("form \(form)")
            switch form {
            case 0: return try bytesValue(Place(tags: [], kind: 0, role: .opaque))
            case 1: return try message(path: [], depth: 1)
            default: throw FormatRuleBroken("a known form (0 or 1), not \(form),")
            }
        }

        /// A message's fields from the shape, to its 0. Reading: the payload's own message is the
        /// first of the "at most 16 messages deep"; a kind-1 field inside it is the second.
        mutating func message(path: [UInt64], depth: Int) throws -> [UInt8] {
            try Self.check(depth <= maxDepth, "messages at most 16 deep")
            var out: [UInt8] = []
            // The digits of this message's kind-3 fields, for the `0x02 k` markers after them.
            var decimals: [[UInt8]] = []
            while true {
                let tag = try shapeVarint()
                if tag == 0 { return out }
                try Self.check(tag >> 3 >= 1, "a field number of at least 1")
                let wire = UInt8(tag & 7)
                seen.insert("wire \(wire)")
                // Reading: the tag is written back as a minimal varint, like every other varint
                // the section writes (the compactor only takes apart payloads whose varints are).
                out += minimalVarint(tag)
                let tags = path + [tag]
                switch wire {
                case 0: out += minimalVarint(try number(Place(tags: tags, kind: 0, role: .numeric)))
                case 1: out += Self.le(try number(Place(tags: tags, kind: 0, role: .numeric)))
                case 5: out += Self.le(UInt32(truncatingIfNeeded: try number(Place(tags: tags, kind: 0, role: .numeric))))
                case 2:
                    let body: [UInt8]
                    let kind = try shapeByte()
                    seen.insert("kind \(kind)")
                    switch kind {
                    case 1: body = try message(path: tags, depth: depth + 1)
                    case 2: body = try bytesValue(Place(tags: tags, kind: 2, role: .bytes))
                    case 3:
                        body = try decimal(try number(Place(tags: tags, kind: 3, role: .decimal)))
                        decimals.append(body)
                    case 4: body = try wordsValue(tags)
                    case 5: body = try templateValue(tags, decimals: decimals)
                    default: throw FormatRuleBroken("a known kind (1 to 5), not \(kind),")
                    }
                    try Self.check(body.count <= rawLength, "a field no longer than the raw payload")
                    out += minimalVarint(UInt64(body.count)) + body
                default: throw FormatRuleBroken("a known wire type (0, 1, 2 or 5), not \(wire),")
                }
            }
        }

        func decimal(_ value: UInt64) throws -> [UInt8] {
            try Self.check(value <= maxDecimal, "a decimal of at most 19 digits")
            return Array(String(value).utf8)
        }

        /// Kind 4: a word count, then an index per word; an index one past the field's words is new.
        mutating func wordsValue(_ tags: [UInt64]) throws -> [UInt8] {
            let count = try number(Place(tags: tags, kind: 4, role: .wordCount))
            try Self.check(count >= 1, "one or more words")
            var out: [UInt8] = []
            var known = words[tags, default: []]
            for index in 0..<count {
                if index > 0 { out.append(0x20) }
                let which = try number(Place(tags: tags, kind: 4, role: .wordIndex))
                if which == UInt64(known.count) {
                    let word = try bytesValue(Place(tags: tags, kind: 4, role: .newWord))
                    try Self.check(!word.isEmpty && !word.contains(0x20), "a new word that is not empty and has no space")
                    known.append(word)
                } else {
                    seen.insert("repeated word")
                }
                try Self.check(which < UInt64(known.count), "a word index no greater than the field's words so far")
                out += known[Int(which)]
                try Self.check(out.count <= rawLength, "words no longer than the raw payload")
            }
            words[tags] = known
            return out
        }

        /// Kind 5: the template's bytes with its markers rendered in place.
        mutating func templateValue(_ tags: [UInt64], decimals: [[UInt8]]) throws -> [UInt8] {
            let template = try bytesValue(Place(tags: tags, kind: 5, role: .template))
            var out: [UInt8] = []
            var marker = 0
            var position = 0
            // The byte after a `0x02` or `0x03`, which is part of the marker.
            func operand() throws -> UInt8 {
                try Self.check(position < template.count, "a template that does not end inside a marker")
                defer { position += 1 }
                return template[position]
            }
            while position < template.count {
                let byte = template[position]
                position += 1
                if byte < 0x04 { seen.insert("marker \(byte)") }
                switch byte {
                case 0x01:
                    out += try decimal(try number(Place(tags: tags, kind: 5, role: .marker(index: marker, byte: 1))))
                case 0x02:
                    let k = Int(try operand())
                    try Self.check(k < decimals.count, "a 0x02 marker naming a kind-3 field met before it in its message")
                    out += decimals[k]
                case 0x03:
                    let digits = Int(try operand())
                    try Self.check((1...16).contains(digits), "a hex marker of 1 to 16 digits")
                    let value = try number(Place(tags: tags, kind: 5, role: .marker(index: marker, byte: 3)))
                    let fits = digits == 16 || value >> (4 * UInt64(digits)) == 0
                    try Self.check(fits, "a hex value that fits in \(digits) digits")
                    let hex = Array(String(value, radix: 16).utf8)
                    out += [UInt8](repeating: UInt8(ascii: "0"), count: digits - hex.count) + hex
                default:
                    // "holding any other byte below 0x04, is corrupt": 0x00 is the only one left.
                    try Self.check(byte >= 0x04, "a template byte below 0x04 only in a marker")
                    out.append(byte)
                    continue
                }
                marker += 1
            }
            return out
        }

        // MARK: Columns

        /// The place's column, numbered the first time the shape uses it.
        mutating func columnNumber(_ place: Place) throws -> Int {
            if let number = places[place] { return number }
            let number = places.count + 1
            try Self.check(number < ranges.count, "a column for every place the shape uses (place \(number))")
            places[place] = number
            columns[number] = try read(ranges[number], bytes: place.role.isBytes)
            return number
        }

        mutating func number(_ place: Place) throws -> UInt64 {
            let index = try columnNumber(place)
            let column = columns[index]!
            try Self.check(column.used < column.count, "column \(index) not read past its end")
            columns[index]!.used += 1
            return column.numbers[column.used]
        }

        mutating func bytesValue(_ place: Place) throws -> [UInt8] {
            let index = try columnNumber(place)
            let column = columns[index]!
            try Self.check(column.used < column.count, "column \(index) not read past its end")
            columns[index]!.used += 1
            return Array(f[column.bytes[column.used]])
        }

        /// A numeric column, or a bytes column (its lengths as a numeric column, then the bytes).
        mutating func read(_ range: Range<Int>, bytes: Bool) throws -> Column {
            var position = range.lowerBound
            let count = try Self.varint(f, &position, end: range.upperBound)
            // Every value rebuilds at least one byte, so a column of more values than the raw
            // payload has bytes has values left over: refused before anything is allocated.
            try Self.check(count <= UInt64(rawLength), "a column of no more values than raw_length")
            try Self.check(range.upperBound - position >= 2, "a numeric column's mode and width")
            let mode = f[position], width = Int(f[position + 1])
            position += 2
            try Self.check(mode <= 1, "a known numeric mode (0 or 1), not \(mode),")
            try Self.check(width <= 8, "a width of 0 to 8, not \(width),")
            let n = Int(count)
            try Self.check(width * n <= range.upperBound - position, "planes within their column")
            var numbers: [UInt64] = []
            numbers.reserveCapacity(n)
            var previous: UInt64 = 0
            if n > 0 { seen.insert("mode \(mode)") }
            for i in 0..<n {
                var stored: UInt64 = 0
                for k in 0..<width { stored |= UInt64(f[position + k * n + i]) << (8 * UInt64(k)) }
                if mode == 1 {
                    // Un-zigzag: 0, 1, 2, 3 … back to 0, −1, 1, −2 …, added modulo 2^64.
                    previous = previous &+ ((stored >> 1) ^ (0 &- (stored & 1)))
                    numbers.append(previous)
                } else {
                    numbers.append(stored)
                }
            }
            position += width * n
            var column = Column(count: n)
            if !bytes {
                try Self.check(position == range.upperBound, "a numeric column that ends at its column_length")
                column.numbers = numbers
                return column
            }
            for length in numbers {
                try Self.check(length <= UInt64(range.upperBound - position), "a bytes column's bytes within the column")
                column.bytes.append(position..<position + Int(length))
                position += Int(length)
            }
            try Self.check(position == range.upperBound, "a bytes column whose lengths add up to its column_length")
            return column
        }

        /// After the last event: the shape used up, and every column numbered and used up.
        func finish() throws {
            try Self.check(shape == ranges[0].upperBound, "a shape with nothing after the last event")
            try Self.check(places.count + 1 == ranges.count, "no column that no place uses")
            for (index, column) in columns {
                try Self.check(column.used == column.count, "column \(index) with no values left over")
            }
        }
    }
}
