import Dispatch
import EventLog

/// Reading a list of sequence ranges, on two cores when it is long.
extension StoreReader {
    /// Ranges shorter than this in all are read on the calling thread: a second reader's seek
    /// walks the block headers before its start (milliseconds at 10 M events), more than half
    /// of a short read saves.
    static let halvingThreshold: UInt64 = 1 << 16

    /// The events from `from` through `through` about a pin that `keeps`, oldest first: only the
    /// ranges whose key summaries may name a pin in `pins` are read (docs/FORMAT.md, "Key
    /// summaries"), in halves from `threshold` events on, and of those only the events `wanted`
    /// lets through are decoded.
    func events(
        aboutPinsIn pins: ClosedRange<UInt64>, from: UInt64, through: UInt64, threshold: UInt64,
        decodingOnly wanted: ((LogEvent) -> Bool)?, keeping keeps: @escaping (PinID) -> Bool
    ) throws -> [RecordedEvent] {
        if let merged {
            // No key summaries across devices yet: every event is read.
            var found: [RecordedEvent] = []
            try merged.forEach(from: from, through: through) { if let pin = $0.event.pin, pins.contains(pin.rawValue), keeps(pin) { found.append($0) } }
            return found
        }
        let ranges = try log.ranges(mayHoldKeysIn: pins, function: EventCodec.pinKeys.name, from: from, through: through)
        return try Self.inHalves(self, ranges: ranges, threshold: threshold) { log, ranges in
            var found: [RecordedEvent] = []
            for range in ranges {
                try Self.scan(log, from: range.lowerBound, through: range.upperBound, decodingOnly: wanted) {
                    if let pin = $0.event.pin, keeps(pin) { found.append($0) }
                }
            }
            return found
        }
    }

    /// `collect` of `ranges` (ascending and apart), in order: at or above `threshold` events in
    /// all, the second half of them is read by a reader of its own on another core while this
    /// one reads the first (readers are for one thread each). Either half's error is thrown,
    /// the first half's first.
    static func inHalves(
        _ store: StoreReader, ranges: [ClosedRange<UInt64>], threshold: UInt64,
        _ collect: @escaping (LogReader, [ClosedRange<UInt64>]) throws -> [RecordedEvent]
    ) throws -> [RecordedEvent] {
        let total = ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound + 1) }
        // A test file system whose calls must come in one order gets them from one thread.
        guard total >= 2, total >= threshold, store.fileSystem.allowsReadAhead else {
            return try collect(store.log, ranges)
        }
        let (first, second) = split(ranges, after: total / 2)
        let other = try LogReader(directory: store.log.directory, fileSystem: store.fileSystem, payloadCodec: EventCodec.blockCodec)
        let halves = Halves(readers: [store.log, other], ranges: [first, second], collect: collect)
        DispatchQueue.concurrentPerform(iterations: 2) { halves.run($0) }
        return try halves.first.get() + halves.second.get()
    }

    /// `ranges` cut after their first `count` events (at least 1, fewer than all of them).
    static func split(_ ranges: [ClosedRange<UInt64>], after count: UInt64) -> ([ClosedRange<UInt64>], [ClosedRange<UInt64>]) {
        var first: [ClosedRange<UInt64>] = [], second: [ClosedRange<UInt64>] = []
        var left = count
        for range in ranges {
            let size = range.upperBound - range.lowerBound + 1
            if left == 0 {
                second.append(range)
            } else if size <= left {
                first.append(range)
                left -= size
            } else {
                first.append(range.lowerBound...(range.lowerBound + left - 1))
                second.append((range.lowerBound + left)...range.upperBound)
                left = 0
            }
        }
        return (first, second)
    }

    /// Two halves' readers and results. Each iteration touches only its own reader and result,
    /// and `concurrentPerform` returns after both, so nothing needs a lock.
    private final class Halves: @unchecked Sendable {
        let readers: [LogReader]
        let ranges: [[ClosedRange<UInt64>]]
        let collect: (LogReader, [ClosedRange<UInt64>]) throws -> [RecordedEvent]
        // Two properties, not an array of two: the halves write at the same time, and two
        // writes into one array are two overlapping accesses to it.
        var first: Result<[RecordedEvent], any Error> = .success([])
        var second: Result<[RecordedEvent], any Error> = .success([])

        init(readers: [LogReader], ranges: [[ClosedRange<UInt64>]], collect: @escaping (LogReader, [ClosedRange<UInt64>]) throws -> [RecordedEvent]) {
            self.readers = readers
            self.ranges = ranges
            self.collect = collect
        }

        func run(_ half: Int) {
            let result = Result { try collect(readers[half], ranges[half]) }
            if half == 0 { first = result } else { second = result }
        }
    }

    /// The pin ids whose hex form starts with `prefix` (up to 16 hex digits), as one range of
    /// numbers; every id when `prefix` is not hex.
    static func pinIDs(startingWith prefix: String) -> ClosedRange<UInt64> {
        let digits = prefix.utf8.count
        guard (1...16).contains(digits), let value = UInt64(prefix, radix: 16) else { return 0...UInt64.max }
        let free = UInt64(4 * (16 - digits))
        guard free > 0 else { return value...value }
        let low = value << free
        return low...(low | ((1 << free) - 1))
    }
}
