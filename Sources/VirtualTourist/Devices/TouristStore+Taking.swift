import DeviceLogs
import EventLog
import FileIO
import Synchronization

/// What ``TouristStore/take(_:from:identity:head:)`` did.
public struct TakeReport: Sendable {
    /// The copy's last event before and after, with how many events came erased.
    public var copied: LogCopier.Report
    /// Places whose forget arrived with these events (erased here before the call returned).
    public var forgetsArrived: [PinID]
}

/// Another device's events taken into the open store (a sync through the cluster, docs/SYNC.md):
/// the events go into the store's copy of that device's log, as a folder sync writes them, and
/// the store folds its merged history again and goes on with it, without closing. A store of one
/// device becomes one of several so.
extension TouristStore {
    /// Takes `events` of the device `device` names (consecutive; those the copy has already are
    /// passed over), which the caller checked against the head their device shipped with them,
    /// `head`. Events about a place forgotten here are taken erased; a forget among them erases
    /// the place here before this returns.
    ///
    /// - Throws: ``DomainError`` `.readOnly` on a replica (but one that takes other devices'
    ///   events: ``StoreOptions/replicaTakesOtherDevices``); `.invalidArgument` for a device of
    ///   another map, this device's own id, or events that do not follow the copy or end at
    ///   another head (nothing taken); `.storage` when the disk fails.
    @discardableResult
    public func take(_ events: [LogEvent], from device: DeviceFile, identity: LogIdentity, head: LogHead) async throws -> TakeReport {
        if !options.replicaTakesOtherDevices { try refuseChangesOnReplica() }
        let result = Mutex<LogCopier.Report?>(nil)
        let forgets = Mutex<[PinID]>([])
        try await processor.exclusively { [self] access in
            // This device's file, saved the first time (a store of one device may have none).
            let this: DeviceFile
            do {
                if let saved = try DeviceFile.load(from: folder, fileSystem: fileSystem) {
                    this = saved
                } else {
                    this = try StoreSync.devices(of: folder, fileSystem).this
                    try this.save(in: folder, fileSystem: fileSystem)
                }
            } catch let error as DeviceError {
                throw StoreSync.domainError(error)
            }
            guard device.map == this.map else {
                throw DomainError(.invalidArgument, "device \(device.device) is of map \(device.map), and this store of map \(this.map)")
            }
            guard device.device != this.device, identity.logID == device.device.bytes else {
                throw DomainError(
                    .invalidArgument, "events of log \(identity.logIDHex) are not another device's of this map (this device is \(this.device))")
            }
            let copyFolder = StoreDevices.folder(store: folder, device: device.device)
            let copyPath = Path.join(copyFolder, "log")
            let forgotten = try ForgottenPlaces(store: folder, fileSystem: fileSystem, folded: access.state)
            let report: LogCopier.Report
            let written: [LogEvent]
            let wasKnown: Bool
            do {
                wasKnown = try fileSystem.exists(copyPath) || fileSystem.exists(Path.join(copyFolder, DeviceFile.name))
                if let open = try openCopy(device.device, at: copyPath, identity: identity) {
                    (report, written) = try CopyAppender.appending(events, to: open, identity: identity, expecting: head, arrivals: forgotten.arrival)
                } else {
                    try fileSystem.createDirectoryDurably(Path.join(folder, StoreDevices.folderName))
                    try fileSystem.createDirectoryDurably(copyFolder)
                    (report, written) = try CopyAppender.appending(
                        events, toCopy: copyPath, identity: identity, expecting: head, configuration: options.log,
                        arrivals: forgotten.arrival, fileSystem: fileSystem)
                }
                if try DeviceFile.load(from: copyFolder, fileSystem: fileSystem) != device { try device.save(in: copyFolder, fileSystem: fileSystem) }
            } catch let error as DeviceError {
                throw StoreSync.domainError(error)
            } catch {
                throw Self.storageError(error, "could not take device \(device.device)'s events into \(folder)")
            }
            result.withLock { $0 = report }
            forgets.withLock { $0 = forgotten.arrived }
            // A device new to the store makes it one of several even before its first event.
            guard report.copied > 0 || !wasKnown else { return }
            // Events that all sort after everything folded are folded on; others fold again.
            if !written.isEmpty, try access.appendTaken(written, of: device.device, head: report.head) != nil {
                clock.observe(written.last!.timestamp)
                return
            }
            try await refold(access, device: device.device, taken: written)
        }
        let arrived = forgets.withLock { $0 }
        // Also a forget an earlier take brought and could not finish (the disk failed then).
        try await finishArrivedForgets()
        return TakeReport(copied: result.withLock { $0 }!, forgetsArrived: arrived)
    }

    /// Finishes the forgets that arrived from other devices and are not finished yet (erases
    /// their places here); nothing when there are none. A sync calls it after each take, and
    /// again when a take failed.
    ///
    /// - Throws: ``DomainError`` `.storage` when the disk fails.
    public func finishArrivedForgets() async throws {
        guard try StoreSync.hasForgetsToFinish(folder, fileSystem) else { return }
        try await finishForgets()
    }

    /// The copy of `device`'s log at `path`, open for writing and kept open (nil when there is
    /// none yet: the first take builds it).
    private func openCopy(_ device: DeviceID, at path: String, identity: LogIdentity) throws -> EventLog? {
        if let open = openCopies.withLock({ $0[device] }) { return open }
        guard try fileSystem.exists(path) else { return nil }
        let held = try LogReader(directory: path, fileSystem: fileSystem, payloadCodec: options.log.payloadCodec).identity()
        guard held == identity else {
            throw DomainError(.invalidArgument, "the copy at \(path) holds another log than device \(device)'s; it was not touched")
        }
        let log = try EventLog.open(at: path, configuration: options.log, fileSystem: fileSystem)
        openCopies.withLock { $0[device] = log }
        return log
    }

    /// Folds the merged history as the files hold it now, with this device's log through its
    /// last event, and makes it the state (from the newest merged snapshot the logs still begin
    /// with: the fork, when an event sorted before others).
    private func refold(_ access: ActionProcessor.ExclusiveAccess, device: DeviceID, taken: [LogEvent]) async throws {
        forgetTimeTravelMemo()
        defer { forgetTimeTravelMemo() }
        guard let history = try MergedHistory.open(store: folder, fileSystem: fileSystem) else {
            throw DomainError(.storage, "the store at \(folder) holds no other device's log after taking one")
        }
        let ownLast = log.lastSequence
        let merged = history.with(ownLast: ownLast)
        let fold = try merged.fold(from: access.checkpoints, noting: device, after: (taken.first?.sequence ?? 1) - 1)
        if let newest = fold.lastTimes.filter({ $0.key != merged.local }).values.max() { clock.observe(newest) }
        let numbering = MergedNumbering(
            device: merged.local, offset: fold.state.sequence - ownLast, runs: fold.runs, lastTime: fold.lastTimes[merged.local])
        // The events taken, as the subscribers read them: at the end of the order (a page
        // refreshes the pins they name wherever they sort); where they do sort is told apart
        // (`historyChangedFrom`), for a page that shows a point of the history.
        var recorded: [RecordedEvent] = []
        var position = fold.state.sequence - UInt64(taken.count)
        for event in taken where !event.isErased {
            position += 1
            guard var decoded = try? EventCodec.decode(event) else { continue }
            decoded.sequence = position
            decoded.origin = EventOrigin(device: device, sequence: event.sequence)
            recorded.append(decoded)
        }
        await access.adopt(
            fold.state, numbering: numbering, copiedLogs: merged.copiedLogs(fold), snapshot: fold.snapshot, events: recorded,
            historyChangedFrom: fold.firstNoted)
    }
}
