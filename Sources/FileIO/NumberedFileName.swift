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
    ///
    /// Read as UTF-8 bytes: a listing of a log or a snapshot folder asks this of every name for
    /// every extension it knows, and `Character`'s Unicode properties made that most of the cost
    /// of opening a reader on a log of a few hundred files (docs/BENCHMARKS-JOURNAL.md).
    public static func number(in name: String, extension fileExtension: String) -> UInt64? {
        let bytes = name.utf8, suffix = fileExtension.utf8
        guard bytes.count == digits + suffix.count else { return nil }
        var value: UInt64 = 0
        var index = bytes.startIndex
        for _ in 0..<digits {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times.addingReportingOverflow(UInt64(digit))
            guard !overflowed, !carried else { return nil }
            value = sum
            index = bytes.index(after: index)
        }
        guard bytes[index...].elementsEqual(suffix) else { return nil }
        return value
    }
}
