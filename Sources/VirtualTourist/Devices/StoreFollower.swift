import DeviceLogs
import EventLog

/// The new events of a store as they land (`vt log --follow`): this device's own, and, in a
/// store of several devices, what a sync adds to the copies of the others' logs. Each poll opens
/// the store's files again, as a reader does, so it follows a store another process writes and
/// syncs, and one that becomes one of several while it is followed.
///
/// ```swift
/// var follower = StoreFollower(after: reader)         // what `reader` showed is already seen
/// if let batch = try follower.poll() { batch.events } // the new events, at their positions now
/// ```
///
/// A sync can bring events that sort before events already given (a device back after a week:
/// docs/DEVICES.md, "One merged order"). Each is given with its position in the merged order as
/// it is now, and ``Batch/late`` counts them: the events after each moved up by one.
public struct StoreFollower: Sendable {
    public struct Batch: Sendable {
        /// The new events, in the merged order, each at its position in it now.
        public var events: [RecordedEvent]
        /// How many of them sort before an event given earlier.
        public var late: Int
    }

    public let folder: String
    /// How far this device's log has been given.
    private var ownShown: UInt64
    /// How far each copy has been given.
    private var copiesShown: [DeviceID: UInt64]

    /// A follower that takes what `reader` holds as already given.
    public init(after reader: StoreReader) {
        folder = reader.folder
        if let merged = reader.merged {
            ownShown = merged.logs[0].last
            copiesShown = Dictionary(uniqueKeysWithValues: merged.logs.dropFirst().map { ($0.device, $0.last) })
        } else {
            ownShown = reader.lastSequence
            copiesShown = [:]
        }
    }

    /// The events that landed since the last poll, collected; nil when none did.
    public mutating func poll() throws -> Batch? {
        var events: [RecordedEvent] = []
        guard let late = try poll({ events.append($0) }) else { return nil }
        return Batch(events: events, late: late)
    }

    /// Gives each event that landed since the last poll to `each`, in the merged order, as it is
    /// read (one event in memory at a time); returns how many sorted before an event given
    /// earlier, or nil when none landed. What was given counts as given even when a later read
    /// fails, so the next poll goes on after it.
    ///
    /// - Throws: ``DomainError`` as ``StoreReader/open(at:fileSystem:snapshotInterval:)`` and its
    ///   reads do, and what `each` throws.
    public mutating func poll(_ each: (RecordedEvent) throws -> Void) throws -> Int? {
        let reader = try StoreReader.open(at: folder)
        guard let merged = reader.merged else {
            guard reader.lastSequence > ownShown else { return nil }
            try reader.forEachEvent(from: ownShown + 1, doing: "the new events cannot be read") { recorded in
                try each(recorded)
                ownShown = recorded.sequence
            }
            return 0
        }
        let shown = merged.logs.map { $0.device == merged.local ? ownShown : copiesShown[$0.device] ?? 0 }
        // The earliest new event by the merged order's key: everything before it was given.
        var earliest: (time: LogTimestamp, device: DeviceID, sequence: UInt64)? = nil
        do {
            for (log, given) in zip(merged.logs, shown) where log.last > given {
                guard let first = try merged.reader(log).event(at: given + 1) else { continue }
                let key = (first.timestamp, log.device, first.sequence)
                if earliest.map({ key < $0 }) ?? true { earliest = key }
            }
        } catch {
            throw TouristStore.storageError(error, "the new events of \(folder) cannot be read")
        }
        guard let earliest else { return nil }
        var late = 0
        var sinceGiven = 0
        let local = merged.local
        let start: UInt64
        do { start = try merged.count(before: earliest.time, device: earliest.device, sequence: earliest.sequence) + 1 } catch {
            throw TouristStore.storageError(error, "the new events of \(folder) cannot be read")
        }
        let given = Dictionary(uniqueKeysWithValues: zip(merged.logs.map(\.device), shown))
        try reader.forEachEvent(from: start, doing: "the new events of \(folder) cannot be read") { recorded in
            let origin = recorded.origin!
            guard origin.sequence > given[origin.device]! else {
                late += sinceGiven  // every new event since the last one given sorts before this one
                sinceGiven = 0
                return
            }
            try each(recorded)
            sinceGiven += 1
            if origin.device == local { ownShown = origin.sequence } else { copiesShown[origin.device] = origin.sequence }
        }
        return late
    }

    /// Polls every `interval` until the task is cancelled, giving each new event to `each` and,
    /// after a poll that brought late events, their count to `late`. A read that fails is tried
    /// again at the next poll (a sync may be renaming a copy into place); three failures in a
    /// row end it with the last one's error.
    public mutating func follow(
        every interval: Duration = .milliseconds(50), _ each: (RecordedEvent) throws -> Void, late: (Int) -> Void = { _ in }
    ) async throws {
        var failures = 0
        while !Task.isCancelled {
            do {
                if let count = try poll(each), count > 0 { late(count) }
                failures = 0
            } catch let error as DomainError {
                failures += 1
                if failures == 3 { throw error }
            }
            try? await Task.sleep(for: interval)
        }
    }
}
