import DeviceLogs
import EventLog
import FileIO

/// The history of a store of several devices: every device's log (this one's and the copies),
/// read in the merged order (docs/DEVICES.md, "One merged order") and decoded, each event with
/// its position in that order and its origin. Positions are what a merged store's state,
/// time travel and inspection count in; each log is read through the event it had when this
/// value was made, so positions stay put while it is used.
///
/// ```swift
/// let history = try MergedHistory.open(store: folder)
/// try history.forEach(from: 1) { print($0.sequence, $0.origin!.device.short, $0.event.typeName) }
/// let then = try history.state(at: 42)
/// ```
///
/// Cost: a pass over every log from its first event (no merged snapshots yet: docs/DEVICES.md,
/// "What is built").
final class MergedHistory {
    struct Log {
        var device: DeviceID
        var directory: String
        var last: UInt64
    }

    let local: DeviceID
    let logs: [Log]
    let fileSystem: any FileSystem
    /// Events in all the logs: the last position.
    let count: UInt64

    init(local: DeviceID, logs: [Log], fileSystem: any FileSystem) {
        self.local = local
        self.logs = logs
        self.fileSystem = fileSystem
        count = logs.reduce(0) { $0 + $1.last }
    }

    /// The history of the store in `folder` as its files hold it now; nil for a store that
    /// knows no other device.
    static func open(store folder: String, fileSystem: any FileSystem) throws -> MergedHistory? {
        let devices: StoreDevices
        do {
            guard try fileSystem.exists(Path.join(folder, StoreDevices.folderName)) else { return nil }
            devices = try StoreDevices.read(store: folder, payloadCodec: EventCodec.blockCodec, fileSystem: fileSystem)
        } catch let error as DeviceError {
            throw DomainError(error.code == .notAStore ? .notAStore : .storage, error.message, cause: error)
        }
        // A store that knows another device is one of several, even before that device wrote
        // anything: its fold is the merged one from then on (origins, the requesting device).
        guard !devices.others.isEmpty else { return nil }
        if let (device, reason) = devices.damaged.first {
            throw DomainError(
                .storage,
                "the copy of device \(device)'s log in \(folder) is damaged (\(reason)); remove \(StoreDevices.folder(store: folder, device: device)) and sync with a device that has it")
        }
        let own = Path.join(folder, "log")
        let ownLast = try LogReader(directory: own, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).lastSequence()
        let logs = [Log(device: devices.this.device, directory: own, last: ownLast)]
            + devices.copies.map { Log(device: $0.id, directory: $0.logPath, last: $0.head.sequence) }
        return MergedHistory(local: devices.this.device, logs: logs, fileSystem: fileSystem)
    }

    /// The same logs, with this device's own read through `ownLast` (the store's own log as far
    /// as its state goes).
    func with(ownLast: UInt64) -> MergedHistory {
        var logs = logs
        logs[0].last = ownLast
        return MergedHistory(local: local, logs: logs, fileSystem: fileSystem)
    }

    /// Decodes the events at positions `from` through `through` in the merged order, one at a
    /// time; events before `from` are read but not decoded.
    func forEach(from: UInt64 = 1, through: UInt64? = nil, _ body: (RecordedEvent) throws -> Void) throws {
        let through = min(through ?? count, count)
        guard through >= max(1, from) else { return }
        var merged = try MergedOrder(logs.map { log in
            (log.device, try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
                .events(from: 1, through: max(1, log.last)))
        })
        let ends = logs.map(\.last)
        var position: UInt64 = 0
        while position < through, let (index, event) = try merged.next() {
            // A log read "through 1" while empty, or past its frozen end, yields nothing to count.
            guard event.sequence <= ends[index] else { continue }
            position += 1
            guard position >= from else { continue }
            try body(Self.decode(event, device: logs[index].device, at: position))
        }
    }

    /// An event of `device`'s log as the merged history holds it.
    static func decode(_ event: LogEvent, device: DeviceID, at position: UInt64) throws -> RecordedEvent {
        var recorded = try EventCodec.decode(event)
        recorded.origin = EventOrigin(device: device, sequence: event.sequence)
        recorded.sequence = position
        return recorded
    }

    /// The state after position `position`, replayed on from `known` when given (a state of
    /// this history at or before it), else from the start.
    func state(at position: UInt64, after known: TouristState? = nil) throws -> TouristState {
        var state = known ?? TouristState(localDevice: local)
        try forEach(from: state.sequence + 1, through: position) { state.apply($0) }
        return state
    }

    /// The whole fold, the positions of this device's own events (index: own sequence − 1), and
    /// the newest time of the other devices' events (the hybrid clock's floor).
    func fold() throws -> (state: TouristState, ownPositions: [UInt64], newestCopied: LogTimestamp?) {
        var state = TouristState(localDevice: local)
        var own: [UInt64] = []
        var newest: LogTimestamp? = nil
        try forEach { recorded in
            if recorded.origin?.device == local {
                own.append(recorded.sequence)
            } else {
                newest = max(newest ?? recorded.timestamp, recorded.timestamp)
            }
            state.apply(recorded)
        }
        return (state, own, newest)
    }

    /// The position of the event `origin` names, if this history holds it.
    func position(of origin: EventOrigin) throws -> RecordedEvent? {
        var found: RecordedEvent?
        try forEach { if found == nil, $0.origin == origin { found = $0 } }
        return found
    }

    /// The position of the last event at or before `time` (0 if none).
    func position(atTime time: LogTimestamp) throws -> UInt64 {
        var last: UInt64 = 0
        try forEach { if $0.timestamp <= time { last = $0.sequence } }
        return last
    }
}
