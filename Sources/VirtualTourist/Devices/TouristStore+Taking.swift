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
    /// - Throws: ``DomainError`` `.readOnly` on a replica; `.invalidArgument` for a device of
    ///   another map, this device's own id, or events that do not follow the copy or end at
    ///   another head (nothing taken); `.storage` when the disk fails.
    @discardableResult
    public func take(_ events: [LogEvent], from device: DeviceFile, identity: LogIdentity, head: LogHead) async throws -> TakeReport {
        try refuseChangesOnReplica()
        let result = Mutex<LogCopier.Report?>(nil)
        let forgets = Mutex<[PinID]>([])
        try await processor.exclusively { [self] access in
            let devices = try StoreSync.devices(of: folder, fileSystem)
            guard device.map == devices.this.map else {
                throw DomainError(.invalidArgument, "device \(device.device) is of map \(device.map), and this store of map \(devices.this.map)")
            }
            guard device.device != devices.this.device, identity.logID == device.device.bytes else {
                throw DomainError(
                    .invalidArgument, "events of log \(identity.logIDHex) are not another device's of this map (this device is \(devices.this.device))")
            }
            let copyFolder = StoreDevices.folder(store: folder, device: device.device)
            let forgotten = ForgottenPlaces(store: folder, fileSystem: fileSystem)
            let report: LogCopier.Report
            do {
                if !devices.hasFile { try devices.this.save(in: folder, fileSystem: fileSystem) }
                try fileSystem.createDirectoryDurably(Path.join(folder, StoreDevices.folderName))
                try fileSystem.createDirectoryDurably(copyFolder)
                report = try CopyAppender.append(
                    events, toCopy: Path.join(copyFolder, "log"), identity: identity, expecting: head, configuration: options.log,
                    arrivals: forgotten.arrival, fileSystem: fileSystem)
                if try DeviceFile.load(from: copyFolder, fileSystem: fileSystem) != device { try device.save(in: copyFolder, fileSystem: fileSystem) }
            } catch let error as DeviceError {
                throw StoreSync.domainError(error)
            } catch {
                throw Self.storageError(error, "could not take device \(device.device)'s events into \(folder)")
            }
            result.withLock { $0 = report }
            forgets.withLock { $0 = forgotten.arrived }
            // A device new to the store makes it one of several even before its first event.
            guard report.copied > 0 || !devices.others.contains(device.device) else { return }
            try await refold(access, device: device.device, taken: events.filter { $0.sequence > report.before })
        }
        let arrived = forgets.withLock { $0 }
        if !arrived.isEmpty { try await finishForgets() }
        return TakeReport(copied: result.withLock { $0 }!, forgetsArrived: arrived)
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
        let fold = try merged.fold()
        if let newest = fold.lastTimes.filter({ $0.key != merged.local }).values.max() { clock.observe(newest) }
        let numbering = MergedNumbering(
            device: merged.local, offset: fold.state.sequence - ownLast, runs: fold.runs, lastTime: fold.lastTimes[merged.local])
        // The events taken, as the subscribers read them: at the end of the order (a page
        // refreshes the pins they name wherever they sort).
        var recorded: [RecordedEvent] = []
        var position = fold.state.sequence - UInt64(taken.count)
        for event in taken where !event.isErased {
            position += 1
            guard var decoded = try? EventCodec.decode(event) else { continue }
            decoded.sequence = position
            decoded.origin = EventOrigin(device: device, sequence: event.sequence)
            recorded.append(decoded)
        }
        await access.adopt(fold.state, numbering: numbering, copiedLogs: merged.copiedLogs(fold), snapshot: fold.snapshot, events: recorded)
    }
}
