/// A line of JSON from `EventJSON.encodeLine` with some lists left empty, and those lists
/// written into it as bytes: for answers whose lists are long (a state's photos, the map's
/// pins), where `JSONEncoder` builds a value for every item. Each empty list is found by its
/// key, after the one before: inside a string every quote is escaped, so a key can only match
/// as a key, and sorted keys put the lists in a known order.
public struct JSONLineFiller {
    private let encoded: [UInt8]
    private var json = JSONLineBytes()
    private var copied = 0

    /// `encoded`, the line with its lists empty; room for `extra` more bytes.
    public init(_ encoded: String, extra: Int) {
        self.encoded = Array(encoded.utf8)
        json.bytes.reserveCapacity(self.encoded.count + extra)
    }

    /// Copies the line up to the empty list after the next `pattern` (`"key":[]`) and writes
    /// its items.
    public mutating func fill(after pattern: String, _ write: (inout JSONLineBytes) -> Void) {
        guard let end = firstEnd(of: Array(pattern.utf8), from: copied) else {
            preconditionFailure("the line has no \(pattern) where its keys put one")
        }
        json.bytes.append(contentsOf: encoded[copied..<end - 1])
        copied = end - 1
        write(&json)
    }

    public mutating func finished() -> [UInt8] {
        json.bytes.append(contentsOf: encoded[copied...])
        copied = encoded.count
        return json.bytes
    }

    /// Where the first `pattern` at or after `start` ends.
    private func firstEnd(of pattern: [UInt8], from start: Int) -> Int? {
        guard encoded.count >= pattern.count, start <= encoded.count - pattern.count else { return nil }
        for index in start...(encoded.count - pattern.count) where encoded[index] == pattern[0] {
            if encoded[index..<index + pattern.count].elementsEqual(pattern) { return index + pattern.count }
        }
        return nil
    }
}

/// JSON written as `EventJSON.encodeLine` (`JSONEncoder` with sorted keys and slashes left
/// alone) writes it: in strings `"` and `\` escaped, `\b \t \n \f \r` short, other control
/// characters as `\u00xx`, the rest as is; numbers as their shortest decimal text.
public struct JSONLineBytes {
    public internal(set) var bytes: [UInt8] = []

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func number(_ value: some BinaryInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A finite number as the encoder writes it: Swift's shortest text that reads back the same
    /// value, without a trailing `.0` (`90`, `-0`, `1e-07`, `45.45887051549815`). The encoder
    /// refuses a number that is not finite; so must the caller, before.
    public mutating func number(_ value: Double) {
        precondition(value.isFinite, "JSON has no \(value)")
        let text = value.description
        bytes.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
    }

    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Runs of bytes that need no escape are copied whole.
    public mutating func string(utf8 text: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var run = 0
        for index in 0..<text.count {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[run..<index]))
            run = index + 1
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x08: raw("\\b")
            case 0x09: raw("\\t")
            case 0x0A: raw("\\n")
            case 0x0C: raw("\\f")
            case 0x0D: raw("\\r")
            default:
                raw("\\u00")
                let digits: StaticString = "0123456789abcdef"
                digits.withUTF8Buffer { bytes.append(contentsOf: [$0[Int(byte >> 4)], $0[Int(byte & 0xF)]]) }
            }
        }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[run...]))
        bytes.append(UInt8(ascii: "\""))
    }
}
