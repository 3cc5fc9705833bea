import DeviceLogs

/// How a store of several devices numbers this device's new events (docs/DEVICES.md): an event's
/// position in the merged order is its sequence number in this device's log plus ``offset``, the
/// events of the other devices folded before it. The hybrid clock times every new event after
/// everything copied, so new events always come last and the offset holds until the next sync.
struct MergedNumbering: Sendable {
    let device: DeviceID
    /// Position minus own sequence number, for this device's new events.
    let offset: UInt64
    /// The positions of this device's events, index: own sequence number − 1 (ascending).
    private(set) var ownPositions: [UInt64]

    init(device: DeviceID, offset: UInt64, ownPositions: [UInt64]) {
        self.device = device
        self.offset = offset
        self.ownPositions = ownPositions
    }

    /// This device's sequence number of the event at `position`; nil when another device wrote it.
    func ownSequence(atPosition position: UInt64) -> UInt64? {
        var low = 0
        var high = ownPositions.count
        while low < high {
            let middle = (low + high) / 2
            if ownPositions[middle] < position { low = middle + 1 } else { high = middle }
        }
        return low < ownPositions.count && ownPositions[low] == position ? UInt64(low + 1) : nil
    }

    mutating func appended(_ positions: [UInt64]) { ownPositions += positions }
}
