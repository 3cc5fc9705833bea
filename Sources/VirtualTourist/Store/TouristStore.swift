import BlobStore
import DeviceLogs
import EventLog
import FileIO
import HistoryProofs
import Synchronization

/// A Virtual Tourist store, opened by folder path: the event log, the snapshots and the
/// projected state, behind one `Sendable` facade.
///
/// ```swift
/// let store = try await TouristStore.open(at: "~/…/virtual-tourist")
/// let pin = try await store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
/// store.state.pins[pin]?.album.status      // .notRequested
/// for await change in store.changes() { … } // each accepted group of events, with the new state
/// let then = try store.state(at: 42)        // time travel
/// try await store.close()
/// ```
///
/// Folder layout: `log/` (docs/FORMAT.md), `snapshots/` (`.snap` files), `blobs/` (photos,
/// docs/BLOBS.md).
/// Every action is checked against the rules (``TouristState/problem(with:)``) before anything
/// is appended; a refused action changes nothing on disk.
public final class TouristStore: Sendable {
    public let folder: String
    public let report: OpenReport
    let options: StoreOptions
    let fileSystem: any FileSystem
    let log: EventLog
    let snapshots: SnapshotFolder
    let processor: ActionProcessor
    /// The log's clock: never before the newest event taken from another device, so that this
    /// device's next event sorts after it (docs/DEVICES.md, "The hybrid clock").
    let clock: HybridClock
    /// The photos' bytes (docs/BLOBS.md).
    public let blobs: BlobStore
    let automaticCollection = Mutex(AutomaticCollection())
    /// The last state time travel computed (``state(at:)``), see ``TimeTravelMemo``.
    let timeTravelMemo = Mutex(TimeTravelMemo())
    /// The copies of other devices' logs that a sync through the cluster writes while the store
    /// is open, kept open between takes (TouristStore+Taking.swift); closed with the store.
    let openCopies = Mutex<[DeviceID: EventLog]>([:])

    /// What a store folder holds; `log.format1` and `log.upgrade` only around an upgrade
    /// (docs/FORMAT.md, "Upgrade from format 1").
    /// `forget.pending` only while a forget is under way (docs/EVENTS.md, "Forgetting a place").
    /// `signing.key` once the device signed a head, `proofs/` once it made a proof,
    /// `signed.head` once it synced (docs/PROOFS.md, "Signed heads", "The roots file", "Signed
    /// heads at sync").
    static let entries: Set<String> = [
        "log", "snapshots", "blobs", "replication", "log.format1", "log.upgrade", forgetMarkerName, forgetMarkerName + ".tmp",
        StoreDevices.folderName, DeviceFile.name, DeviceFile.name + ".tmp",
        ForgetProgress.countName, ForgetProgress.countName + ".tmp", ForgottenPlaces.arrivedName, ForgottenPlaces.arrivedName + ".tmp",
        "signing.key", "signing.key.tmp", "proofs", SignedHead.fileName, SignedHead.fileName + ".tmp", receiptsFolderName,
    ]

    var logPath: String { Path.join(folder, "log") }

    /// Opens (or creates) the store in `folder`: loads the newest sound snapshot and replays
    /// only the events after it. Opening does not grow with the log's length.
    ///
    /// - Throws: ``DomainError`` — `.notAStore` when the folder holds something else,
    ///   `.storage` when the log cannot be opened (its ``EventLog/LogError`` is the cause: for
    ///   example another program has the store open), `.undecodableEvent` when the log holds an
    ///   event this program cannot read.
    public static func open(
        at folder: String, options: StoreOptions = StoreOptions(), fileSystem: any FileSystem = PosixFileSystem()
    ) async throws -> TouristStore {
        let fileSystem = fileSystem.confined(to: folder)
        let started = ContinuousClock.now
        try prepare(folder, options: options, fileSystem: fileSystem)
        if try knowsOtherDevices(folder, fileSystem),
            let store = try await openMerged(at: folder, options: options, fileSystem: fileSystem, started: started)
        {
            return store
        }
        let snapshots = SnapshotFolder(
            path: Path.join(folder, "snapshots"), fileSystem: fileSystem, interval: max(1, options.snapshotInterval))
        // The newest snapshot loads while the log recovers; it is used only once it is checked
        // against the log as recovered, like any other.
        let preloading = snapshots.preload()
        // The log is opened for a resume from the newest snapshot: its head is checked while
        // the snapshot loads, the replay after it starts where that check's scan stopped, and
        // the log's own background checks wait until the replay is done (LogResumption).
        let resumption: LogResumption
        // A hybrid clock here too: a sync through the cluster can make this store one of
        // several devices while it is open (TouristStore+Taking.swift).
        var configuration = options.log.withPinKeys
        let clock = HybridClock(base: configuration.clock)
        configuration.clock = clock
        do {
            resumption = try EventLog.resume(
                at: Path.join(folder, "log"), newestCheckpoint: preloading.sequence, configuration: configuration,
                fileSystem: fileSystem)
        } catch let error as LogError where error.code == .needsUpgrade {
            _ = preloading.wait()
            throw DomainError(
                .needsUpgrade,
                "the store at \(folder) is in log format 1, which this version reads (log, show, state, history, verify,"
                    + " export) but no longer writes; convert it first with `vt upgrade --store \(folder)`, which keeps the"
                    + " old log beside the new one as log.format1",
                cause: error)
        } catch let error as LogError {
            _ = preloading.wait()
            throw DomainError(.storage, "the store at \(folder) cannot be opened: \(error.message)", cause: error)
        }
        let log = resumption.log
        // A sync may have made this a store of several devices between the look above and the
        // writer's lock (a sync holds that lock while it writes): looked at again under it.
        if try knowsOtherDevices(folder, fileSystem) {
            _ = preloading.wait()
            try? log.close()
            guard let store = try await openMerged(at: folder, options: options, fileSystem: fileSystem, started: started) else {
                throw DomainError(.storage, "the store at \(folder) changed while it opened; open it again")
            }
            return store
        }
        do {
            let (base, skipped) = try snapshots.newest(
                atOrBefore: log.lastSequence, heads: resumption.head(at:), preloaded: preloading.wait())
            // The snapshot's state is handed to the replay, not kept here: held twice, it would
            // be copied whole (pins, photo references) by the first event folded onto it.
            let snapshotSequence = base?.sequence
            let state = try replay(
                from: (consume base) ?? TouristState(), through: log.lastSequence, events: resumption.events(after:))
            resumption.replayed()
            // Snapshots of an older format are of no use to this version: gone once replayed past.
            if !skipped.isEmpty { _ = try? snapshots.removeOutdated() }
            let blobs = try BlobStore(directory: Path.join(folder, "blobs"), fileSystem: fileSystem, options: options.blobs)
            let processor = ActionProcessor(
                log: log, state: state, lastSnapshot: snapshotSequence ?? 0,
                snapshots: snapshots, blobs: blobs,
                refusal: options.replicaOf.map {
                    "this store is a read-only replica of \($0); make changes on the original store"
                })
            let report = OpenReport(
                logRecovery: log.recovery, snapshot: snapshotSequence, skippedSnapshots: skipped,
                replayedEvents: state.sequence - (snapshotSequence ?? 0), duration: ContinuousClock.now - started)
            let store = TouristStore(
                folder: folder, report: report, options: options, fileSystem: fileSystem, log: log,
                snapshots: snapshots, processor: processor, clock: clock, blobs: blobs)
            // A sync cut short can list a forget it never copied: here, no device's event came.
            try ForgottenPlaces.record([], adding: false, in: folder, fileSystem: fileSystem)
            if let pin = try interruptedForget(in: folder, fileSystem: fileSystem)?.pin {
                // A forget was cut short: finish it before anyone reads what it was erasing.
                do { try await store.forget(pin) } catch {
                    try? await store.close()
                    throw storageError(error, "the store at \(folder) could not finish forgetting pin \(pin)")
                }
            }
            if let interval = options.collectionInterval { store.startCollecting(every: interval) }
            return store
        } catch {
            try? log.close()
            throw storageError(error, "the store at \(folder) cannot be read")
        }
    }

    init(
        folder: String, report: OpenReport, options: StoreOptions, fileSystem: any FileSystem, log: EventLog,
        snapshots: SnapshotFolder, processor: ActionProcessor, clock: HybridClock, blobs: BlobStore
    ) {
        self.clock = clock
        self.folder = folder
        self.report = report
        self.options = options
        self.fileSystem = fileSystem
        self.log = log
        self.snapshots = snapshots
        self.processor = processor
        self.blobs = blobs
    }

    deinit {
        automaticCollection.withLock { $0.task?.cancel() }
        processor.stopWithoutWaiting()
    }

    /// The current state: a value, so it stays as it is while the store moves on.
    public var state: TouristState { processor.published }

    /// The sequence number of the last event (0 for a new store).
    public var lastSequence: UInt64 { state.sequence }

    /// Every group of events accepted from now on, with the state after it. The stream ends
    /// when the store closes.
    public func changes() -> AsyncStream<StoreChange> { processor.changes() }

    /// Waits until the state satisfies `condition` (checked now, then after each accepted
    /// group of events) and returns that state.
    ///
    /// ```swift
    /// let done = try await store.waitForState { $0.pins[pin]?.album.isNewCollectionEnabled == true }
    /// ```
    ///
    /// - Throws: ``DomainError`` `.closed` when the store closes first; `CancellationError`
    ///   when the waiting task is cancelled.
    public func waitForState(where condition: @Sendable (TouristState) -> Bool) async throws -> TouristState {
        let stream = changes()
        let now = state
        if condition(now) { return now }
        for await change in stream where change.state.sequence > now.sequence {
            if condition(change.state) { return change.state }
        }
        try Task.checkCancellation()
        throw DomainError(.closed, "the store at \(folder) closed before the awaited state came")
    }

    /// Why the most recent snapshot that failed since the store opened could not be written
    /// (nil: none failed). The store works on without it; opening just replays more.
    public var snapshotFailure: (any Error)? { processor.snapshotFailure }

    /// Seals the log's hot tail and compacts it into sealed blocks now (format 2; the log does it
    /// in the background too). A format-1 log has nothing to compact.
    @discardableResult
    public func compactLog() throws -> CompactionReport {
        do { return try log.compact() } catch let error as LogError where error.code == .invalidArgument {
            throw DomainError(.invalidArgument, error.message)
        } catch {
            throw Self.storageError(error, "could not compact the log of \(folder)")
        }
    }

    /// The format of the store's log.
    public var logFormat: LogFormatVersion { log.format }

    /// Finishes queued actions, writes a snapshot, and closes the log (releasing its lock).
    public func close() async throws {
        await stopCollecting()
        await processor.close()
        do {
            for copy in openCopies.withLock({ copies in defer { copies = [:] }; return Array(copies.values) }) { try copy.close() }
            try log.close()
        } catch {
            throw Self.storageError(error, "the store at \(folder) did not close cleanly")
        }
    }

    /// Creates the folder when allowed; refuses a file, or a folder holding other things.
    private static func prepare(_ folder: String, options: StoreOptions, fileSystem: any FileSystem) throws {
        let status: FileStatus?
        do { status = try fileSystem.status(folder) } catch {
            throw storageError(error, "cannot look at \(folder)")
        }
        switch status {
        case nil:
            guard options.createIfMissing else { throw DomainError(.notAStore, "there is no store at \(folder)") }
            do { try fileSystem.createDirectoryDurably(folder) } catch { throw storageError(error, "cannot create \(folder)") }
        case let status? where status.kind != .directory:
            throw DomainError(.notAStore, "\(folder) is a file, not a Virtual Tourist store")
        default:
            let foreign = ((try? fileSystem.listDirectory(folder)) ?? []).filter { !entries.contains($0) }.sorted()
            if !foreign.isEmpty {
                throw DomainError(
                    .notAStore,
                    "\(folder) holds other things (\(foreign.prefix(5).joined(separator: ", "))); a store folder holds"
                        + " only log/, snapshots/ and blobs/. Choose an empty or new folder")
            }
        }
    }

    /// Folds the log's events after `state` through `last`, decoding each.
    /// `state` is taken, not borrowed: a caller that keeps its own copy makes the first event
    /// folded copy the whole state.
    static func replay(
        _ reader: LogReader, from state: consuming TouristState, through last: UInt64
    ) throws -> TouristState {
        try replay(from: state, through: last) { try reader.events(from: $0 + 1, through: last) }
    }

    /// The same, with the events after a sequence from `events`.
    static func replay(
        from state: consuming TouristState, through last: UInt64, events: (UInt64) throws -> LogCursor
    ) throws -> TouristState {
        var state = consume state
        guard last > state.sequence else { return state }
        let cursor = try events(state.sequence)
        while let event = try cursor.next() {
            state.apply(try EventCodec.decode(event))
        }
        guard state.sequence == last else {
            throw DomainError(.storage, "the log ends at \(state.sequence), before sequence \(last)")
        }
        return state
    }

    static func storageError(_ error: any Error, _ doing: String) -> DomainError {
        if let error = error as? DomainError { return error }
        if let error = error as? LogError { return DomainError(.storage, "\(doing): \(error.message)", cause: error) }
        return DomainError(.storage, doing + ((error as? IOError)?.advice ?? ""), cause: error)
    }
}
