import EventLog
import Synchronization

/// The tests' one clock: it reads what the test set, never the wall (tests wait for events,
/// not for time). Moved by hand with ``advance(microseconds:)`` and ``set(_:)``; with a step,
/// each reading moves it on by that much (a clock that never shows the same time twice).
public final class TestClock: LogClock, Sendable {
    private let value: Mutex<Int64>
    private let stepPerReading: Int64

    /// Starts at `start` microseconds since 1970 (default: November 2023).
    public init(_ start: Int64 = 1_700_000_000_000_000, stepPerReading: Int64 = 0) {
        value = Mutex(start)
        self.stepPerReading = stepPerReading
    }

    public func now() -> LogTimestamp {
        LogTimestamp(microsecondsSinceEpoch: value.withLock { current in
            defer { current += stepPerReading }
            return current
        })
    }

    public func advance(microseconds: Int64) { value.withLock { $0 += microseconds } }

    public func set(_ microseconds: Int64) { value.withLock { $0 = microseconds } }
}
