import DeviceLogs
import BlobStore
import EventLog
import FileIO
import Foundation

/// A read-only view of a store: the log as far as it went when the reader was opened, the
/// snapshots beside it, and the photos. It takes no lock, so it can run beside the program that
/// writes the store (guarantee 4) and sees a consistent prefix of the log.
///
/// ```swift
/// let reader = try StoreReader.open(at: folder)
/// let now = try reader.state(at: reader.lastSequence)
/// let then = try reader.state(at: 42)            // nearest snapshot, then at most an interval of events
/// try reader.forEachEvent(from: 1) { print($0.sequence, $0.event.typeName) }
/// ```
///
/// ``TouristStore``'s time travel goes through one of these too. A reader is for one thread at a
/// time.
public final class StoreReader {
    public let folder: String
    /// The last event this reader sees: the log's end when it was opened.
    public let lastSequence: UInt64
    let fileSystem: any FileSystem
    let log: LogReader
    let snapshots: SnapshotFolder
    /// In a store of several devices, the merged history: positions are in its order, and
    /// every read goes through it (docs/DEVICES.md).
    let merged: MergedHistory?

    init(
        folder: String, lastSequence: UInt64, fileSystem: any FileSystem, log: LogReader, snapshots: SnapshotFolder,
        merged: MergedHistory? = nil
    ) {
        self.folder = folder
        self.lastSequence = lastSequence
        self.fileSystem = fileSystem
        self.log = log
        self.snapshots = snapshots
        self.merged = merged
    }

    /// Opens the store in `folder` for reading.
    ///
    /// - Throws: ``DomainError`` `.notAStore` when there is no store there, `.storage` when its
    ///   log cannot be read (damage is named; `vt verify` says more).
    public static func open(
        at folder: String, fileSystem: any FileSystem = PosixFileSystem(), snapshotInterval: UInt64 = StoreOptions().snapshotInterval
    ) throws -> StoreReader {
        let fileSystem = fileSystem.confined(to: folder)
        let logPath = Path.join(folder, "log")
        let status: FileStatus?
        do { status = try fileSystem.status(logPath) } catch {
            throw TouristStore.storageError(error, "cannot look at \(folder)")
        }
        guard status?.kind == .directory else {
            let what = (try? fileSystem.status(folder)) == nil ? "there is nothing at \(folder)" : "\(folder) has no log/ folder"
            throw DomainError(.notAStore, "\(folder) is not a Virtual Tourist store (\(what))")
        }
        do {
            let log = try LogReader(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
            let merged = try MergedHistory.open(store: folder, fileSystem: fileSystem)
            return StoreReader(
                folder: folder, lastSequence: try merged?.count ?? log.lastSequence(), fileSystem: fileSystem, log: log,
                snapshots: SnapshotFolder(path: Path.join(folder, "snapshots"), fileSystem: fileSystem, interval: max(1, snapshotInterval)),
                merged: merged)
        } catch let error as LogError where error.code == .notALog {
            throw DomainError(.notAStore, "\(folder) is not a Virtual Tourist store: \(error.message)", cause: error)
        } catch {
            throw TouristStore.storageError(error, "the store at \(folder) cannot be read")
        }
    }

    /// The state after event `sequence` (0: the empty state). Cost: load the nearest snapshot
    /// at or before it, then replay at most about the snapshot interval of events.
    public func state(at sequence: UInt64) throws -> TouristState {
        try state(at: sequence, after: nil)
    }

    /// The same, replayed from `known` when given: a state of this log at or before
    /// `sequence` (one time travel computed a moment ago) instead of the nearest snapshot.
    func state(at sequence: UInt64, after known: TouristState?) throws -> TouristState {
        guard sequence <= lastSequence else {
            throw DomainError(.invalidArgument, "the log ends at sequence \(lastSequence); there is no state at \(sequence)")
        }
        precondition(known.map { $0.sequence <= sequence } ?? true)
        do {
            if let merged { return try merged.state(at: sequence, after: known) }
            let base = try known ?? snapshots.newest(atOrBefore: sequence, heads: log.headInBackground).0 ?? TouristState()
            return try TouristStore.replay(log, from: consume base, through: sequence)
        } catch {
            throw TouristStore.storageError(error, "the state at \(sequence) cannot be read")
        }
    }

    /// What changed between the states after `from` and after `to`. The later state is
    /// replayed on from the earlier one when no snapshot lies between them, or when they lie
    /// close enough that replaying the events between costs less than loading a snapshot
    /// (``TimeTravelMemo/replayRatherThanLoad``, as the slider does): one snapshot loaded
    /// instead of two, for the common diff of two nearby points (docs/BENCHMARKS.md).
    public func difference(from: UInt64, to: UInt64) throws -> StateDiff {
        try difference(from: from, to: to, replayingUpTo: TimeTravelMemo.replayRatherThanLoad)
    }

    /// The same, replaying on from the earlier state when the two lie at most `distance`
    /// events apart (tests take 0, to load a snapshot wherever one lies between).
    func difference(from: UInt64, to: UInt64, replayingUpTo distance: UInt64) throws -> StateDiff {
        let (early, late) = (min(from, to), max(from, to))
        let earlier = try state(at: early)
        let nearest = try snapshotSequences().last { $0 <= late } ?? 0
        let replays = late - early <= distance || nearest <= early
        let later = replays ? try state(at: late, after: earlier) : try state(at: late)
        return from <= to ? earlier.difference(to: later) : later.difference(to: earlier)
    }

    /// The state at the end of the log.
    public func currentState() throws -> TouristState { try state(at: lastSequence) }

    /// The sequence number of the last event at or before `time` (0 if none).
    public func sequence(atTime time: LogTimestamp) throws -> UInt64 {
        do {
            if let merged { return try merged.position(atTime: time) }
            let cursor = try log.events(since: time.adding(microseconds: 1))
            guard let after = try cursor.next(), after.sequence <= lastSequence else { return lastSequence }
            return after.sequence - 1
        } catch {
            throw TouristStore.storageError(error, "the log cannot be searched by time")
        }
    }

    /// The state as it was at `time`.
    public func state(atTime time: LogTimestamp) throws -> TouristState {
        try state(at: sequence(atTime: time))
    }

    /// The event at `sequence`, then the event that caused it, and so on to the first cause.
    public func causes(of sequence: UInt64) throws -> [RecordedEvent] {
        guard lastSequence > 0, (1...lastSequence).contains(sequence) else {
            throw DomainError(.invalidArgument, "there is no event \(sequence); " + Self.range(lastSequence))
        }
        do {
            if let merged { return try mergedCauses(of: sequence, in: merged) }
            var chain: [RecordedEvent] = []
            var next: UInt64? = sequence
            while let current = next, let event = try log.event(at: current) {
                let recorded = try EventCodec.decode(event)
                chain.append(recorded)
                // Causes always point backwards; anything else would loop.
                next = recorded.cause.flatMap { $0 < current ? $0 : nil }
            }
            return chain
        } catch {
            throw TouristStore.storageError(error, "the causes of event \(sequence) cannot be read")
        }
    }

    /// Decodes events `from` through `through` (default: this reader's last) one at a time,
    /// holding one batch in memory.
    public func forEachEvent(
        from: UInt64 = 1, through: UInt64? = nil, doing: String = "the events cannot be read",
        _ body: (RecordedEvent) throws -> Void
    ) throws {
        do {
            if let merged { return try merged.forEach(from: from, through: min(through ?? lastSequence, lastSequence), body) }
            try Self.scan(log, from: from, through: min(through ?? lastSequence, lastSequence), decodingOnly: nil, body)
        } catch {
            throw TouristStore.storageError(error, doing)
        }
    }

    /// The same for the events about no pin (RegionChanged, DeviceSeen) alone: the others are
    /// turned down by their stored bytes, undecoded (`vt why region` reads back through a log
    /// that is nearly all pins' events). In a store of several devices every event is decoded.
    public func forEachEventAboutNoPin(from: UInt64, through: UInt64, _ body: (RecordedEvent) throws -> Void) throws {
        do {
            if let merged {
                return try merged.forEach(from: from, through: min(through, lastSequence)) { event in
                    if event.event.pin == nil { try body(event) }
                }
            }
            try Self.scan(log, from: from, through: min(through, lastSequence), decodingOnly: { EventCodec.pinKey(of: $0.payload) == nil }, body)
        } catch {
            throw TouristStore.storageError(error, "the events cannot be read")
        }
    }

    /// The loop of ``forEachEvent(from:through:doing:_:)``, on any reader of the log, leaving
    /// undecoded (and unseen by `body`) the events `wanted` turns down by their stored bytes.
    static func scan(
        _ log: LogReader, from: UInt64, through: UInt64, decodingOnly wanted: ((LogEvent) -> Bool)?,
        _ body: (RecordedEvent) throws -> Void
    ) throws {
        guard through >= max(1, from) else { return }
        let cursor = try log.events(from: max(1, from), through: through)
        while let event = try cursor.next() {
            if let wanted, !wanted(event) { continue }
            try body(try EventCodec.decode(event))
        }
    }

    /// The causes in a merged history: a cause is a sequence number of the event's own device's log.
    private func mergedCauses(of position: UInt64, in merged: MergedHistory) throws -> [RecordedEvent] {
        var chain: [RecordedEvent] = []
        try merged.forEach(from: position, through: position) { chain.append($0) }
        while let last = chain.last, let origin = last.origin, let cause = last.cause, cause < origin.sequence,
            let found = try merged.position(of: EventOrigin(device: origin.device, sequence: cause))
        {
            chain.append(found)
        }
        return chain
    }

    /// Whether the store has several devices (positions are in the merged order).
    public var hasSeveralDevices: Bool { merged != nil }

    /// This store's device, in a store of several devices (nil in a store of one): the device
    /// whose view the state is (its map region, the requests it answers).
    public var localDevice: DeviceID? { merged?.local }

    /// The sequence numbers of the snapshots on disk, ascending.
    public func snapshotSequences() throws -> [UInt64] {
        do { return try snapshots.sequences() } catch {
            throw TouristStore.storageError(error, "the snapshots of \(folder) cannot be listed")
        }
    }

    /// The photos' folder (read-only use: `get`, `contains`, `verify`).
    public func blobStore() throws -> BlobStore {
        do { return try BlobStore(directory: Path.join(folder, "blobs"), fileSystem: fileSystem) } catch {
            throw TouristStore.storageError(error, "the photos of \(folder) cannot be opened")
        }
    }

    /// "the log holds 1…n" or "the log is empty", for messages.
    static func range(_ last: UInt64) -> String {
        last == 0 ? "the log is empty" : "the log holds 1…\(last)"
    }
}

extension StoreReader {
    /// Every event from `sequence` on, decoded, waiting for new appends as they land (the log
    /// is polled every `pollInterval`). Ends when the task is cancelled.
    public func follow(from sequence: UInt64, pollInterval: Duration = .milliseconds(50))
        -> AsyncThrowingMapSequence<LogFollower, RecordedEvent>
    {
        log.follow(from: sequence, pollInterval: pollInterval).map { try EventCodec.decode($0) }
    }
}
