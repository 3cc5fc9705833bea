import EventLog
import Foundation

extension FieldColumnsEncoder {
    /// Parses a message strictly (minimal varints, known wire types, whole fields) into
    /// `tokens`; false, with `tokens` as it was, when the bytes are not such a message.
    static func parse(
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
