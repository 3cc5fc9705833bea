/// JSON string literals for the answers the offline service (and the tests' doubles built on
/// it) write by hand: the listings are small and their shape is fixed, so no encoder is needed.
public enum JSONText {
    /// `text` as a JSON string, quotes included: `"`, `\\` and control characters escaped.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
