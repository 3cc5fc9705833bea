import BlobStore
import DeviceLogs
import EventLog
import FileIO

/// A store of several devices (docs/DEVICES.md): opened by folding every device's log in the
/// merged order, with this device's new events numbered after everything it has copied.
extension TouristStore {
    /// This device's id in a store of several devices; nil in a store of one.
    public var localDevice: DeviceID? { processor.localDevice }

    /// Whether the store in `folder` knows another device, by the names in `devices/` (the
    /// copies are read once, by the merged open).
    static func knowsOtherDevices(_ folder: String, _ fileSystem: any FileSystem) throws -> Bool {
        do { return try StoreDevices.knowsAnother(store: folder, fileSystem: fileSystem) } catch let error as DeviceError {
            throw DomainError(error.code == .notAStore ? .notAStore : .storage, error.message, cause: error)
        }
    }

    /// Opens a store that holds other devices' logs: the merged fold from the newest merged
    /// snapshot the logs still begin with (the fork, when a late event arrived), a hybrid clock
    /// after every copied event, and the positions of this device's own events for the causes
    /// its new events name. The copies are read under the
    /// log's writer lock, which a sync holds while it writes them. Nil when the store knows no
    /// other device after all (nothing is left open then).
    static func openMerged(
        at folder: String, options: StoreOptions, fileSystem: any FileSystem, started: ContinuousClock.Instant
    ) async throws -> TouristStore? {
        let snapshots = SnapshotFolder(path: Path.join(folder, "snapshots"), fileSystem: fileSystem, interval: max(1, options.snapshotInterval))
        var configuration = options.log.withPinKeys
        let clock = HybridClock(base: configuration.clock)
        configuration.clock = clock
        let log: EventLog
        do {
            log = try EventLog.open(at: Path.join(folder, "log"), configuration: configuration, fileSystem: fileSystem)
        } catch let error as LogError {
            throw DomainError(.storage, "the store at \(folder) cannot be opened: \(error.message)", cause: error)
        }
        do {
            guard let history = try MergedHistory.open(store: folder, fileSystem: fileSystem) else {
                try? log.close()
                return nil
            }
            let merged = history.with(ownLast: log.lastSequence)
            let fold = try merged.fold()
            let state = fold.state
            if let newestCopied = fold.lastTimes.filter({ $0.key != merged.local }).values.max() { clock.observe(newestCopied) }
            let numbering = MergedNumbering(
                device: merged.local, offset: state.sequence - log.lastSequence, runs: fold.runs, lastTime: fold.lastTimes[merged.local])
            let blobs = try BlobStore(directory: Path.join(folder, "blobs"), fileSystem: fileSystem, options: options.blobs)
            let processor = ActionProcessor(
                log: log, state: state, lastSnapshot: fold.snapshot ?? 0, snapshots: snapshots, blobs: blobs,
                refusal: options.replicaOf.map { "this store is a read-only replica of \($0); make changes on the original store" },
                numbering: numbering, copiedLogs: merged.copiedLogs(fold))
            let report = OpenReport(
                logRecovery: log.recovery, snapshot: fold.snapshot, skippedSnapshots: fold.skipped,
                replayedEvents: state.sequence - (fold.snapshot ?? 0), duration: ContinuousClock.now - started)
            let store = TouristStore(
                folder: folder, report: report, options: options, fileSystem: fileSystem, log: log, snapshots: snapshots,
                processor: processor, clock: clock, blobs: blobs)
            do { try await store.finishForgets() } catch {
                try? await store.close()
                throw storageError(error, "the store at \(folder) could not finish forgetting a place")
            }
            if let interval = options.collectionInterval { store.startCollecting(every: interval) }
            return store
        } catch {
            try? log.close()
            throw storageError(error, "the store at \(folder) cannot be read")
        }
    }

    /// The merged history as far as this store's state goes (nil in a store of one device).
    func mergedHistory() throws -> MergedHistory? {
        guard localDevice != nil else { return nil }
        // The copies do not change while the store is open, so the state's position less the
        // events copied is how far this device's own log goes in it.
        return try MergedHistory.open(store: folder, fileSystem: fileSystem)?.with(ownLast: state.sequence - processor.mergedOffset)
    }
}
