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
/// Cost: the fold and time travel start from the newest merged snapshot that is still a prefix
/// of the merged order (``start(atOrBefore:)``), so a late event costs a refold from the
/// fork, not from the first event; `forEach` from position 1 reads every log.
final class MergedHistory {
    struct Log {
        var device: DeviceID
        var directory: String
        var last: UInt64
        /// A copy's chain head at `last`, as the store's devices listed it (nil for this device's log).
        var head: LogHead? = nil
    }

    let local: DeviceID
    let logs: [Log]
    let fileSystem: any FileSystem
    /// The store's snapshots, whose merged ones a fold may start from (nil: none used).
    let snapshots: SnapshotFolder?
    /// Events in all the logs: the last position.
    let count: UInt64

    init(local: DeviceID, logs: [Log], fileSystem: any FileSystem, snapshots: SnapshotFolder? = nil) {
        self.local = local
        self.logs = logs
        self.fileSystem = fileSystem
        self.snapshots = snapshots
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
        return try MergedHistory(store: folder, devices: devices, fileSystem: fileSystem)
    }

    /// Every log of the store in `folder` (its own and the copies that read), also when it knows
    /// no other device yet: what a sync into it weighs arriving events against.
    ///
    /// - Throws: ``DeviceError`` when the store's devices cannot be read.
    static func everyLog(of folder: String, fileSystem: any FileSystem) throws -> MergedHistory {
        try MergedHistory(
            store: folder, devices: StoreDevices.read(store: folder, payloadCodec: EventCodec.blockCodec, fileSystem: fileSystem),
            fileSystem: fileSystem)
    }

    /// This device's log as it is now and every copy that reads, with the store's snapshots.
    private convenience init(store folder: String, devices: StoreDevices, fileSystem: any FileSystem) throws {
        let own = Path.join(folder, "log")
        let ownLast = try LogReader(directory: own, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).lastSequence()
        let logs = [Log(device: devices.this.device, directory: own, last: ownLast)]
            + devices.copies.map { Log(device: $0.id, directory: $0.logPath, last: $0.head.sequence, head: $0.head) }
        // The interval matters only to the writing of snapshots, not here.
        let snapshots = SnapshotFolder(path: Path.join(folder, "snapshots"), fileSystem: fileSystem, interval: 1)
        self.init(local: devices.this.device, logs: logs, fileSystem: fileSystem, snapshots: snapshots)
    }

    /// The same logs, with this device's own read through `ownLast` (the store's own log as far
    /// as its state goes).
    func with(ownLast: UInt64) -> MergedHistory {
        var logs = logs
        logs[0].last = ownLast
        return MergedHistory(local: local, logs: logs, fileSystem: fileSystem, snapshots: snapshots)
    }

    /// Decodes the events at positions `from` through `through` in the merged order, one at a
    /// time; events before `from` are read but not decoded. With `resuming`, the events it
    /// folded (a prefix of the merged order, ``start(atOrBefore:pinsOnly:)``) are not read at all.
    func forEach(
        from: UInt64 = 1, through: UInt64? = nil, resuming start: (position: UInt64, folded: [UInt64])? = nil,
        _ body: (RecordedEvent) throws -> Void
    ) throws {
        let through = min(through ?? count, count)
        guard through >= max(1, from) else { return }
        let folded = start?.folded ?? logs.map { _ in 0 }
        precondition(start.map { $0.position < max(1, from) } ?? true, "a fold resumes only before the events it decodes")
        var merged = try MergedOrder(zip(logs, folded).map { log, folded in
            (log.device, try reader(log).events(from: folded + 1, through: max(folded + 1, log.last)))
        })
        let ends = logs.map(\.last)
        var position: UInt64 = start?.position ?? 0
        while position < through, let (index, event) = try merged.next() {
            // A log read "through" one past its frozen end yields an event not to count.
            guard event.sequence <= ends[index] else { continue }
            position += 1
            guard position >= from else { continue }
            try body(Self.decode(event, device: logs[index].device, at: position))
        }
    }

    func reader(_ log: Log) throws -> LogReader {
        try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
    }

    /// An event of `device`'s log as the merged history holds it.
    static func decode(_ event: LogEvent, device: DeviceID, at position: UInt64) throws -> RecordedEvent {
        var recorded = try EventCodec.decode(event)
        recorded.origin = EventOrigin(device: device, sequence: event.sequence)
        recorded.sequence = position
        return recorded
    }

    /// The state after position `position`, replayed on from `known` when given (a state of
    /// this history at or before it) or from the newest merged snapshot that fits, whichever is
    /// nearer, else from the start.
    func state(at position: UInt64, after known: TouristState? = nil) throws -> TouristState {
        let known = known.flatMap { $0.sequence <= position ? $0 : nil }
        var (start, _) = try self.start(atOrBefore: position, stateAbove: known?.sequence)
        // A snapshot after `known` is nearer; one at or before it gave only where to read from.
        var state = start.takeState() ?? known!
        if let known, known.sequence > state.sequence { state = known }
        try forEach(from: state.sequence + 1, through: position, resuming: start.resumption) { state.apply($0) }
        return state
    }

    /// The whole fold (from the newest merged snapshot that is still a prefix of this history),
    /// where this device's events lie in it, the time of its last one, and the newest time of
    /// the other devices' events (the hybrid clock's floor).
    ///
    /// With `noting`, the fold also notes the position of that device's first event after
    /// sequence `after` (``Fold/firstNoted``): where events just taken lie in the order.
    func fold(from checkpoints: [MergedCheckpoint] = [], noting device: DeviceID? = nil, after: UInt64 = 0) throws -> Fold {
        var (start, skipped) = try self.start(fromNewestOf: checkpoints).map { ($0, []) } ?? self.start(atOrBefore: count)
        var fold = Fold(state: start.takeState()!, runs: start.runs, snapshot: start.snapshot, skipped: skipped)
        for entry in start.frontier?.logs ?? [] where entry.last > 0 { fold.lastTimes[entry.device] = entry.lastTime }
        try forEach(from: start.position + 1, resuming: start.resumption) { recorded in
            let origin = recorded.origin!
            if origin.device == local { MergedNumbering.append(recorded.sequence, to: &fold.runs) }
            if fold.firstNoted == nil, origin.device == device, origin.sequence > after { fold.firstNoted = recorded.sequence }
            fold.lastTimes[origin.device] = recorded.timestamp
            fold.state.apply(recorded)
        }
        return fold
    }

    /// What ``fold()`` gives.
    struct Fold {
        var state: TouristState
        /// Where this device's events lie in it.
        var runs: [MergedFrontier.Run]
        /// The merged snapshot the fold started from (its position), and the ones passed over.
        var snapshot: UInt64?
        var skipped: [SkippedSnapshot]
        /// Each log's last event's time (times never go back along a log).
        var lastTimes: [DeviceID: LogTimestamp] = [:]
        /// The position of the noted device's first event after the sequence named.
        var firstNoted: UInt64?
    }

    /// The other devices' logs as a fold of the whole history leaves them: a merged snapshot's
    /// frontier but for this device's log.
    func copiedLogs(_ fold: Fold) -> [MergedFrontier.Log] {
        logs.compactMap { log in
            guard log.device != local, let head = log.head else { return nil }
            return MergedFrontier.Log(
                device: log.device, last: log.last, lastTime: fold.lastTimes[log.device] ?? LogTimestamp(microsecondsSinceEpoch: 0),
                head: log.last == 0 ? [UInt8](repeating: 0, count: 32) : head.hash.bytes)
        }
    }

    /// The event `origin` names, at its position, if this history holds it. Only that event is
    /// decoded: the others are merged by their keys alone.
    func position(of origin: EventOrigin) throws -> RecordedEvent? {
        guard let index = logs.firstIndex(where: { $0.device == origin.device }), origin.sequence >= 1,
            origin.sequence <= logs[index].last
        else { return nil }
        var merged = try MergedOrder(logs.map { log in (log.device, try reader(log).events(from: 1, through: max(1, log.last))) })
        var position: UInt64 = 0
        while let (log, event) = try merged.next() {
            guard event.sequence <= logs[log].last else { continue }
            position += 1
            if log == index, event.sequence == origin.sequence { return try Self.decode(event, device: origin.device, at: position) }
        }
        return nil
    }

    /// How many events of this history sort before an event of `device` numbered `sequence`
    /// at `time` (the merged order's key): that event's position less one. Each log is entered
    /// at `time` by its block headers; only its events at exactly `time` are compared one by one.
    func count(before time: LogTimestamp, device: DeviceID, sequence: UInt64) throws -> UInt64 {
        var total: UInt64 = 0
        for log in logs where log.last > 0 {
            let cursor = try reader(log).events(since: time)
            var before: UInt64? = nil
            while let event = try cursor.next(), event.sequence <= log.last {
                if before == nil { before = event.sequence - 1 }
                let sortsBefore = event.timestamp == time && (log.device < device || (log.device == device && event.sequence < sequence))
                guard sortsBefore else { break }
                before! += 1
            }
            total += before ?? log.last  // none at or after `time` within the frozen end: every one is before
        }
        return total
    }

    /// The position of the last event at or before `time` (0 if none).
    func position(atTime time: LogTimestamp) throws -> UInt64 {
        var last: UInt64 = 0
        try forEach { if $0.timestamp <= time { last = $0.sequence } }
        return last
    }
}
