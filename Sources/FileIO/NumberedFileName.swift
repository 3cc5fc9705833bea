/// Names of files numbered by a 64-bit value: 20 zero-padded decimal digits, then an extension,
/// so that names sort in number order. The log's segments and the store's snapshots use them.
///
/// ```swift
/// NumberedFileName.make(4097, extension: ".seg")                          // "00000000000000004097.seg"
/// NumberedFileName.number(in: "00000000000000004097.seg", extension: ".seg") // 4097
/// ```
public enum NumberedFileName {
    public static let digits = 20

    public static func make(_ number: UInt64, extension fileExtension: String) -> String {
        let text = String(number)
        return String(repeating: "0", count: digits - text.count) + text + fileExtension
    }

    /// The number in a name made by ``make(_:extension:)``; nil for any other name (exactly 20
    /// ASCII digits are required, so no other file is mistaken for one).
    public static func number(in name: String, extension fileExtension: String) -> UInt64? {
        guard name.hasSuffix(fileExtension) else { return nil }
        let text = name.dropLast(fileExtension.count)
        guard text.count == digits, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(text)
    }
}
