#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time as the log stores it: microseconds since 1970-01-01T00:00:00Z.
///
/// ```swift
/// let t = LogTimestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
/// t.description   // "2023-11-14T22:13:20.000000Z"
/// ```
public struct LogTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microsecondsSinceEpoch: Int64

    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    public static func < (a: LogTimestamp, b: LogTimestamp) -> Bool {
        a.microsecondsSinceEpoch < b.microsecondsSinceEpoch
    }

    /// This time moved by a number of microseconds, saturating at the ends of `Int64`
    /// (the earliest and latest times stay themselves instead of trapping).
    public func adding(microseconds: Int64) -> LogTimestamp {
        let (sum, overflow) = microsecondsSinceEpoch.addingReportingOverflow(microseconds)
        guard overflow else { return LogTimestamp(microsecondsSinceEpoch: sum) }
        return LogTimestamp(microsecondsSinceEpoch: microseconds > 0 ? .max : .min)
    }

    /// ISO 8601 in UTC with microseconds.
    public var description: String {
        // Floor division by remainder: `micros - 999_999` (and `seconds * 1_000_000`) would
        // overflow for the earliest times, which a damaged log or an import can hold.
        var seconds = microsecondsSinceEpoch / 1_000_000
        var fraction = microsecondsSinceEpoch % 1_000_000
        if fraction < 0 {
            seconds -= 1
            fraction += 1_000_000
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let fractionText = String(fraction)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
            + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
            + "." + String(repeating: "0", count: 6 - fractionText.count) + fractionText + "Z"
    }
}

/// Where the log gets the time: for new events, and for when an interval sync falls due
/// (``LogConfiguration/Durability/interval(_:)``). Inject one in tests for exact, repeatable logs.
public protocol LogClock: Sendable {
    func now() -> LogTimestamp
}

/// A clock whose reading changes only when someone moves it (a test's clock). The log's writer
/// thread, which sleeps until an interval sync is due, is then woken each time the clock moves,
/// instead of after a real-time wait: a test moves the clock past the interval and waits for
/// the sync, and no sync happens before it does.
public protocol SteppedLogClock: LogClock {
    /// Calls `moved` after each move of the clock, for as long as the returned object is kept.
    func whenMoved(_ moved: @escaping @Sendable () -> Void) -> AnyObject
}

/// The system's real-time clock (`CLOCK_REALTIME`).
public struct SystemClock: LogClock {
    public init() {}

    public func now() -> LogTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return LogTimestamp(microsecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }
}
