/// A strict reader of one flat JSON object whose values are strings or non-negative integers:
/// the shape of `device.json`. Strict where a general decoder is lenient: a duplicate key, a
/// nested value, a fraction or trailing bytes are refused, so that one file cannot mean two
/// things to two readers.
struct FlatJSON {
    enum Value: Equatable {
        case text(String)
        case number(UInt64)
    }

    private let bytes: [UInt8]
    private var at = 0

    enum Outcome {
        case object([String: Value])
        /// What is wrong, and where.
        case problem(String)
    }

    /// The object's members, or a message saying what is wrong and where.
    static func parse(_ bytes: [UInt8]) -> Outcome {
        var reader = FlatJSON(bytes: bytes)
        do { return .object(try reader.object()) } catch let problem as Problem { return .problem(problem.message) } catch {
            return .problem("\(error)")
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private struct Problem: Error { let message: String }

    private func problem(_ what: String) -> Problem { Problem(message: "\(what) at byte \(at)") }

    private mutating func object() throws -> [String: Value] {
        skipSpace()
        try expect(UInt8(ascii: "{"))
        var members: [String: Value] = [:]
        skipSpace()
        if peek == UInt8(ascii: "}") {
            at += 1
        } else {
            while true {
                skipSpace()
                let key = try string()
                guard members[key] == nil else { throw problem("the key \"\(key)\" appears twice") }
                skipSpace()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                members[key] = try value()
                skipSpace()
                if peek == UInt8(ascii: ",") { at += 1; continue }
                try expect(UInt8(ascii: "}"))
                break
            }
        }
        skipSpace()
        guard at == bytes.count else { throw problem("bytes follow the object") }
        return members
    }

    private var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { at += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard peek == byte else { throw problem("expected '\(Character(Unicode.Scalar(byte)))'") }
        at += 1
    }

    private mutating func value() throws -> Value {
        switch peek {
        case UInt8(ascii: "\""): return .text(try string())
        case let digit? where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit): return .number(try number())
        default: throw problem("a value here must be a string or a whole number")
        }
    }

    private mutating func number() throws -> UInt64 {
        let start = at
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { at += 1 }
        if at - start > 1, bytes[start] == UInt8(ascii: "0") { throw problem("a number cannot start with 0") }
        if let byte = peek, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            throw problem("a number here must be whole")
        }
        guard let value = UInt64(String(decoding: bytes[start..<at], as: UTF8.self)) else { throw problem("the number is too large") }
        return value
    }

    private mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() throws {
            guard let text = String(validating: run, as: UTF8.self) else { throw problem("the text is not valid UTF-8") }
            scalars.append(contentsOf: text.unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while true {
            guard let byte = peek else { throw problem("the text does not end") }
            at += 1
            switch byte {
            case UInt8(ascii: "\""):
                try flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush()
                scalars.append(try escape())
            case 0..<0x20:
                throw problem("a control character inside a text must be escaped")
            default:
                run.append(byte)
            }
        }
    }

    private mutating func escape() throws -> Unicode.Scalar {
        guard let byte = peek else { throw problem("the text does not end") }
        at += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try hexUnit()
            if (0xD800..<0xDC00).contains(first) {
                guard peek == UInt8(ascii: "\\") else { throw problem("a lone surrogate") }
                at += 1
                guard peek == UInt8(ascii: "u") else { throw problem("a lone surrogate") }
                at += 1
                let second = try hexUnit()
                guard (0xDC00..<0xE000).contains(second) else { throw problem("a lone surrogate") }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(first) else { throw problem("a lone surrogate") }
            return scalar
        default:
            throw problem("an unknown escape")
        }
    }

    private mutating func hexUnit() throws -> UInt32 {
        guard at + 4 <= bytes.count, bytes[at..<at + 4].allSatisfy({ Self.isHexDigit($0) }),
            let value = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16)
        else { throw problem("\\u needs four hexadecimal digits") }
        at += 4
        return value
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
