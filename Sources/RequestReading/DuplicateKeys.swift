/// Finds a key named twice in one JSON object of a request body.
///
/// Why: `JSONDecoder` takes such a body and keeps one of the values, so `{"latitude": 1,
/// "latitude": 80}` would drop a pin where one reader of the body and another disagree. A body
/// that names a key twice is refused instead (RFC 8259 says names SHOULD be unique; I-JSON,
/// RFC 7493, says MUST). Keys compare after their escapes are read: `"a"` and `"\u0061"` are
/// one key.
public enum DuplicateKeys {
    /// The first key named twice in one object, or nil (nil too for bytes that are not JSON:
    /// the decoder says what is wrong with those).
    public static func first(in bytes: some Collection<UInt8>) -> String? {
        let bytes = Array(bytes)
        // One frame per open object or array: the keys an object has named so far.
        var frames: [(keys: Set<String>, isObject: Bool)] = []
        var expectingKey = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                frames.append(([], true))
                expectingKey = true
            case UInt8(ascii: "["):
                frames.append(([], false))
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = frames.popLast()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = frames.last?.isObject ?? false
            case UInt8(ascii: "\""):
                guard let (text, end) = string(in: bytes, at: index) else { return nil }
                if expectingKey, !frames.isEmpty {
                    if !frames[frames.count - 1].keys.insert(text).inserted { return text }
                    expectingKey = false
                }
                index = end
                continue
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The string whose opening quote is at `start`, its escapes read, and the index after its
    /// closing quote; nil when it does not close or an escape is malformed.
    static func string(in bytes: [UInt8], at start: Int) -> (String, Int)? {
        var text: [UInt8] = []
        var units: [UInt16] = []  // \u escapes, kept together so that surrogate pairs join
        func flush() {
            if !units.isEmpty { text += Array(String(decoding: units, as: UTF16.self).utf8) }
            units.removeAll()
        }
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush()
                return (String(decoding: text, as: UTF8.self), index + 1)
            }
            guard byte == UInt8(ascii: "\\") else {
                flush()
                text.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return nil }
            let escape = bytes[index + 1]
            if escape == UInt8(ascii: "u") {
                guard index + 6 <= bytes.count, let unit = UInt16(String(decoding: bytes[index + 2..<index + 6], as: UTF8.self), radix: 16)
                else { return nil }
                units.append(unit)
                index += 6
                continue
            }
            flush()
            switch escape {
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
            default: return nil
            }
            index += 2
        }
        return nil
    }
}
