import Foundation

/// UTC times as RFC 3339 text (`2026-11-23T21:05:09Z`), the form JetStream's JSON uses.
/// Foundation's `ISO8601DateFormatter` builds an ICU formatter each time it is made, which cost
/// more than the rest of a photo's upload.
public enum RFC3339 {
    public static func string(from date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [UInt8]()
        text.reserveCapacity(20)
        func digits(_ value: Int32, _ width: Int) {
            var divisor: Int32 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        text.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        text.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        text.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2)
        text.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
        text.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }
}
