import DeviceLogs
import EventLog

/// How a store of several devices numbers this device's new events (docs/DEVICES.md): an event's
/// position in the merged order is its sequence number in this device's log plus ``offset``, the
/// events of the other devices folded before it. The hybrid clock times every new event after
/// everything copied, so new events always come last and the offset holds until the next sync.
struct MergedNumbering: Sendable {
    let device: DeviceID
    /// Position minus own sequence number, for this device's new events.
    let offset: UInt64
    /// Where this device's events lie in the merged order, as runs of consecutive positions
    /// (ascending): a device's events come in runs between syncs, so there are few.
    private(set) var runs: [MergedFrontier.Run]
    /// The time of this device's last event (nil before its first).
    private(set) var lastTime: LogTimestamp?

    init(device: DeviceID, offset: UInt64, runs: [MergedFrontier.Run], lastTime: LogTimestamp?) {
        self.device = device
        self.offset = offset
        self.runs = runs
        self.lastTime = lastTime
    }

    /// This device's sequence number of the event at `position`; nil when another device wrote it.
    func ownSequence(atPosition position: UInt64) -> UInt64? {
        var low = 0
        var high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].position <= position { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let run = runs[low - 1]
        return position - run.position < run.count ? run.first + (position - run.position) : nil
    }

    /// This device's events just folded, at `positions` (ascending, after every run), the last at `time`.
    mutating func appended(_ positions: [UInt64], lastTime time: LogTimestamp?) {
        for position in positions { Self.append(position, to: &runs) }
        if let time { lastTime = time }
    }

    /// Adds this device's next event, at `position`, to `runs`.
    static func append(_ position: UInt64, to runs: inout [MergedFrontier.Run]) {
        if let last = runs.last, last.position + last.count == position {
            runs[runs.count - 1].count += 1
        } else {
            runs.append(MergedFrontier.Run(position: position, first: runs.last.map { $0.first + $0.count } ?? 1, count: 1))
        }
    }
}
