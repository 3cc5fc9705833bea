/// Reduces the small HTML fragments Commons puts in its metadata (an `Artist` such as
/// `<a href="//commons.wikimedia.org/wiki/User:Ann">Ann &amp; Bo</a>`) to plain text: tags
/// dropped, character references decoded, whitespace collapsed. It is not an HTML parser;
/// what it returns is shown as text, never as markup, so a fragment it misreads can only look
/// odd, not inject anything.
///
/// ```swift
/// HTMLText.plain("<span>Ann &amp; Bo</span>\n")   // "Ann & Bo"
/// ```
public enum HTMLText {
    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "#39": "'",
    ]

    /// The text of `html`, at most `limit` characters (cut with an ellipsis). O(n).
    public static func plain(_ html: String, limit: Int = 300) -> String {
        var out = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<" {
                // A tag: skip to its end; a block-level tag separates words.
                guard let end = html[index...].firstIndex(of: ">") else { break }
                out.append(" ")
                index = html.index(after: end)
                continue
            }
            if character == "&", let end = html[index...].prefix(12).firstIndex(of: ";") {
                let name = String(html[html.index(after: index)..<end])
                if let decoded = decode(name) {
                    out += decoded
                    index = html.index(after: end)
                    continue
                }
            }
            out.append(character)
            index = html.index(after: index)
        }
        let words = out.split(whereSeparator: { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.value < 0x20 } })
        let text = words.joined(separator: " ")
        return text.count > limit ? String(text.prefix(limit - 1)) + "…" : text
    }

    static func decode(_ name: String) -> String? {
        if let known = named[name] { return known }
        guard name.hasPrefix("#") else { return nil }
        let digits = name.dropFirst()
        let value: UInt32? = digits.hasPrefix("x") || digits.hasPrefix("X")
            ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        guard let value, value >= 0x20, let scalar = Unicode.Scalar(value) else { return nil }
        return String(Character(scalar))
    }
}
