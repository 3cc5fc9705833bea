/// The headers of an HPUB or HMSG: the `NATS/1.0` version line, an optional status (the server
/// uses it for 503 no responders and for a pull consumer's 404, 408, 409 and 100), and
/// `Name: value` lines in order, a name possibly repeated.
public struct NATSHeaders: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    /// The status code of a status message, nil for a message a client published.
    public var status: Int?
    /// The words after the status code ("No Messages", "Request Timeout"…).
    public var statusDescription: String
    /// The fields in the order they arrived or were added.
    public private(set) var fields: [(name: String, value: String)]

    public init() {
        self.init(status: nil, statusDescription: "")
    }

    public init(status: Int?, statusDescription: String) {
        self.status = status
        self.statusDescription = statusDescription
        self.fields = []
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init()
        for (name, value) in elements { fields.append((name, value)) }
    }

    /// The first value of `name`. Names compare without case, as NATS servers and clients treat
    /// `Nats-Msg-Id` and `nats-msg-id` alike in practice.
    public subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    public func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// Adds a field; names and values that would break the line format are refused here rather
    /// than corrupting the connection's byte stream.
    public mutating func append(_ name: String, _ value: String) throws(NATSError) {
        guard !name.isEmpty, !name.utf8.contains(where: { $0 == 0x3A || $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidArgument("the header name '\(name)' is empty or holds ':', a space or a control character")
        }
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else {
            throw .invalidArgument("the value of header '\(name)' holds a line break")
        }
        fields.append((name, value))
    }

    /// Replaces every value of `name` by `value`.
    public mutating func set(_ name: String, _ value: String) throws(NATSError) {
        let wanted = name.lowercased()
        let kept = fields.filter { $0.name.lowercased() != wanted }
        try append(name, value)
        fields = kept + [fields.last!]
    }

    public static func == (lhs: NATSHeaders, rhs: NATSHeaders) -> Bool {
        lhs.status == rhs.status && lhs.statusDescription == rhs.statusDescription
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The header block as HPUB sends it, ending with the empty line.
    public func encoded() -> [UInt8] {
        var text = "NATS/1.0"
        if let status { text += " \(status)" + (statusDescription.isEmpty ? "" : " \(statusDescription)") }
        text += "\r\n"
        for field in fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Reads a header block; `bytes` is exactly the header part of an HMSG.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(NATSError) -> NATSHeaders {
        var lines = splitLines(bytes)
        guard let first = lines.first else { throw .protocolViolation("an empty header block") }
        lines.removeFirst()
        let version = Array("NATS/1.0".utf8)
        guard first.starts(with: version) else {
            throw .protocolViolation("a header block that does not start with NATS/1.0")
        }
        var headers = NATSHeaders()
        let statusPart = trimmingSpaces(first.dropFirst(version.count))
        if !statusPart.isEmpty {
            let code = statusPart.prefix { $0 != 0x20 && $0 != 0x09 }
            // A status is three digits from 100 to 999: no sign, no leading zero.
            guard code.count == 3, let number = Int(decimal: code), number >= 100 else {
                let shown = String(decoding: statusPart.prefix(40), as: UTF8.self)
                throw .protocolViolation("a header status '\(shown)' that is not a 3-digit code")
            }
            headers.status = number
            headers.statusDescription = String(decoding: trimmingSpaces(statusPart.dropFirst(3)), as: UTF8.self)
        }
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw .protocolViolation("a header line without a name and ':'")
            }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            let value = String(decoding: trimmingSpaces(line[(colon + 1)...]), as: UTF8.self)
            headers.fields.append((name, value))
        }
        return headers
    }

    /// Lines separated by CRLF; the trailing empty line(s) become empty slices.
    private static func splitLines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 0x0D, index + 1 < bytes.endIndex, bytes[index + 1] == 0x0A {
                lines.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        if start < bytes.endIndex { lines.append(bytes[start...]) }
        return lines
    }
}

/// Spaces and tabs trimmed from both ends, on the bytes: trimming the decoded text by Character
/// would miss a space that a following combining mark joins into one Character (a fuzz find).
func trimmingSpaces(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
    guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return [] }
    let last = bytes.lastIndex(where: { !isSpace($0) })!
    return bytes[first...last]
}

extension String {
    func trimmingSpaces() -> String {
        String(decoding: NATSClient.trimmingSpaces(ArraySlice(utf8)), as: UTF8.self)
    }
}
