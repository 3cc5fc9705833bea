import EventLog
import Synchronization

/// A device's log clock: the system's (or a test's) clock, never before one microsecond after
/// the newest time the device has seen in another device's log (docs/DEVICES.md, "The hybrid
/// clock"). The log's writer keeps its own times from going back; this keeps them after every
/// event taken from the others, so that (time, device, sequence) orders each event after
/// everything it could have seen.
///
/// ```swift
/// let clock = HybridClock(base: SystemClock())
/// clock.observe(newestTimeOfACopy)
/// configuration.clock = clock
/// ```
public final class HybridClock: LogClock {
    private let base: any LogClock
    private let floor = Mutex(Int64.min)

    public init(base: any LogClock) { self.base = base }

    public func now() -> LogTimestamp {
        let reading = base.now()
        let floor = floor.withLock { $0 }
        return reading.microsecondsSinceEpoch >= floor ? reading : LogTimestamp(microsecondsSinceEpoch: floor)
    }

    /// Raises the floor to one microsecond after `time` (never lowers it).
    public func observe(_ time: LogTimestamp) {
        let (next, overflow) = time.microsecondsSinceEpoch.addingReportingOverflow(1)
        floor.withLock { $0 = max($0, overflow ? .max : next) }
    }

    /// The earliest time the clock can read now.
    public var earliest: LogTimestamp { LogTimestamp(microsecondsSinceEpoch: floor.withLock { $0 }) }
}
