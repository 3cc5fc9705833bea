import EventLog
import Synchronization

/// The tests' one clock: it reads what the test set, never the wall (tests wait for events,
/// not for time). Moved by hand with ``advance(microseconds:)`` and ``set(_:)``; with a step,
/// each reading moves it on by that much (a clock that never shows the same time twice). A
/// log's writer thread waiting for an interval sync is woken by each move by hand
/// (``SteppedLogClock``), not by the readings' steps.
public final class TestClock: SteppedLogClock, Sendable {
    private let value: Mutex<Int64>
    private let stepPerReading: Int64
    private let watchers = Mutex<[ObjectIdentifier: @Sendable () -> Void]>([:])

    /// Removes its callback when released.
    private final class Watch: Sendable {
        let clock: TestClock
        init(_ clock: TestClock) { self.clock = clock }
        deinit { _ = clock.watchers.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) } }
    }

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

    public func advance(microseconds: Int64) {
        value.withLock { $0 += microseconds }
        tellWatchers()
    }

    public func set(_ microseconds: Int64) {
        value.withLock { $0 = microseconds }
        tellWatchers()
    }

    public func whenMoved(_ moved: @escaping @Sendable () -> Void) -> AnyObject {
        let watch = Watch(self)
        watchers.withLock { $0[ObjectIdentifier(watch)] = moved }
        return watch
    }

    /// Outside the clock's own lock: a watcher takes its log's lock, under which the log reads
    /// the clock.
    private func tellWatchers() {
        for moved in watchers.withLock({ Array($0.values) }) { moved() }
    }
}
