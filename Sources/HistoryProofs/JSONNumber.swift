import Foundation

/// Whole numbers as Foundation's JSON reader gives them. It gives `true` and `false` as numbers
/// too, and on Linux `1` and `0` answer `is Bool` as well: a boolean is told apart by its
/// `objCType` (`c`), not by a cast.
enum JSONNumber {
    /// The value as a whole number; nil for a boolean, a fraction, a string or anything else.
    static func whole(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        guard number.stringValue == String(number.int64Value) else { return nil }
        return number.int64Value
    }
}
