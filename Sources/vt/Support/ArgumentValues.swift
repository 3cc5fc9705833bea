import ArgumentParser
import EventLog
import Foundation
import VirtualTourist

/// Parsing what people type into values, with messages that say what was expected.
enum ArgumentValues {
    /// Numbers given as positional arguments: gathered raw (so `-33.86` is a number, not an
    /// option) and checked here.
    static func numbers(_ texts: [String], names: [String]) throws -> [Double] {
        let texts = texts.filter { $0 != "--" }  // the usual end-of-options marker is not a number
        guard texts.count == names.count else {
            throw ValidationError("expected \(names.count) numbers (\(names.joined(separator: " "))), got \(texts.count)"
                + (texts.isEmpty ? "" : ": \(texts.joined(separator: " "))"))
        }
        return try zip(texts, names).map { text, name in
            guard isDecimal(text), let value = Double(text), value.isFinite else {
                throw ValidationError("\(name) \"\(text)\" is not a number in decimal (like -33.8568)")
            }
            return value
        }
    }

    /// Whether `text` is a number as people write one: an optional sign, digits with at most
    /// one point, an optional exponent. `Double(_:)` alone also reads hexadecimal (`0x10` is
    /// 16), `inf` and `nan`, which no coordinate is.
    static func isDecimal(_ text: String) -> Bool {
        func digits(_ part: Substring) -> Bool { part.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        var rest = Substring(text)
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let exponentStart = rest.firstIndex { $0 == "e" || $0 == "E" } ?? rest.endIndex
        let parts = rest[..<exponentStart].split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.contains(where: { !$0.isEmpty }), parts.allSatisfy(digits) else { return false }
        guard exponentStart < rest.endIndex else { return true }
        var exponent = rest[rest.index(after: exponentStart)...]
        if exponent.first == "+" || exponent.first == "-" { exponent = exponent.dropFirst() }
        return !exponent.isEmpty && digits(exponent)
    }

    static func coordinate(_ texts: [String]) throws -> Coordinate {
        let values = try numbers(texts, names: ["LAT", "LON"])
        let place = Coordinate(latitude: values[0], longitude: values[1])
        if let problem = place.problem { throw ValidationError(problem) }
        return place
    }

    /// A time: ISO 8601 (`2026-11-21T09:30:00Z`, with or without fraction or zone), a date
    /// (`2026-11-21`, midnight UTC), or a span before now (`90s`, `15m`, `2h`, `3d`).
    static func time(_ text: String, now: Date = Date()) throws -> LogTimestamp {
        if let span = try? duration(text) {
            let micros = Int64(now.timeIntervalSince1970 * 1_000_000) - Int64(span.components.seconds) * 1_000_000
                - span.components.attoseconds / 1_000_000_000_000
            return LogTimestamp(microsecondsSinceEpoch: micros)
        }
        let formats: [(String, Bool)] = [
            ("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXXXX", true), ("yyyy-MM-dd'T'HH:mm:ssXXXXX", true),
            ("yyyy-MM-dd'T'HH:mm:ss.SSSSSS", false), ("yyyy-MM-dd'T'HH:mm:ss", false), ("yyyy-MM-dd", false),
        ]
        for (format, _) in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                return LogTimestamp(microsecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
            }
        }
        throw ValidationError(
            "\"\(text)\" is not a time: use ISO 8601 (2026-11-21T09:30:00Z), a date (2026-11-21) or a span before now (90s, 15m, 2h, 3d)")
    }

    /// A duration: a number and a unit, `s`, `m`, `h` or `d` (`0s`, `10m`, `24h`).
    static func duration(_ text: String) throws -> Duration {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let unit = text.last, let scale = units[unit], let number = Double(text.dropLast()), number.isFinite, number >= 0,
            number * scale < 1e12
        else {
            throw ValidationError("\"\(text)\" is not a duration: use a number and s, m, h or d (30s, 10m, 24h, 7d)")
        }
        return .milliseconds(Int64((number * scale * 1000).rounded()))
    }
}
