import BlobStore
import DeviceLogs
import EventLog
import FileIO

/// Forgetting a place in a store of several devices (docs/DEVICES.md, "Forgetting a place on
/// several devices"): every log the store holds is read and erased, its own and its copies of
/// the other devices'.
extension TouristStore {
    /// The forget's steps in a store of several devices, run alone (``forgetExclusively``).
    /// `plan` is an interrupted forget's, of this pin.
    func forgetMerged(
        _ pin: PinID, plan: ForgetPlan?, access: ActionProcessor.ExclusiveAccess, progress: (@Sendable (String) -> Void)?
    ) async throws -> ForgetReport {
        var report = ForgetReport(pin: pin)
        var receipt: Result<ReceiptStart, DomainError>?
        progress?("reading every device's history for pin \(pin)")
        let (found, planned) = try scanDevices(for: pin, through: log.lastSequence)
        guard found.mentioned || plan != nil else { throw TouristState.unknownPin(pin) }
        var merged = plan ?? ForgetPlan(pin: pin)
        merged.merge(planned)
        if merged != plan { try writeForgetMarker(merged) }

        if let position = found.forgottenAt {
            report.sequence = position  // forgotten on this device before, or on another
        } else if let refusal = processor.refusal {
            throw DomainError(.readOnly, refusal)
        } else {
            receipt = startReceipt(erasingIn: merged.copyTargets.keys, progress: progress)
            let recorded = try await access.append([.placeForgotten(pin: pin, erasedEvents: UInt64(merged.count))])
            report.sequence = recorded[0].sequence
        }
        // Every snapshot may hold the place, and still fits the logs once their events are
        // erased (an erasure keeps the heads): gone before the erasure, so that no open after a
        // crash starts from one (it finishes the forget, which folds from the first event).
        progress?("removing the snapshots")
        await access.snapshotsSettled()
        report.snapshotsRemoved = try snapshots.removeAll()
        progress?("erasing \(merged.count) events from \(1 + merged.copyTargets.count) device logs")
        forgetTimeTravelMemo()
        defer { forgetTimeTravelMemo() }
        do {
            if !merged.targets.isEmpty {
                let erasure = try log.erase(merged.targets)
                report.erasedEvents += erasure.erased + erasure.alreadyErased
                report.quarantinedFilesRemoved += erasure.quarantinedFilesRemoved
            }
            for (device, targets) in merged.copyTargets.sorted(by: { $0.key < $1.key }) where !targets.isEmpty {
                // A copy a sync through the cluster keeps open is erased through that log.
                let kept = openCopies.withLock { $0[device] }
                let copy = try kept ?? EventLog.open(
                    at: Path.join(StoreDevices.folder(store: folder, device: device), "log"), configuration: options.log, fileSystem: fileSystem)
                let erasure: ErasureReport
                do { erasure = try copy.erase(targets) } catch {
                    if kept == nil { try? copy.close() }
                    throw error
                }
                if kept == nil { try copy.close() }
                report.erasedEvents += erasure.erased + erasure.alreadyErased
                report.quarantinedFilesRemoved += erasure.quarantinedFilesRemoved
            }
        } catch {
            throw Self.storageError(error, "could not erase pin \(pin)'s events from the logs of \(folder)")
        }

        guard let history = try MergedHistory.open(store: folder, fileSystem: fileSystem)?.with(ownLast: log.lastSequence) else {
            throw DomainError(.storage, "the store at \(folder) no longer holds another device's log")
        }
        let replayed = try history.fold().state
        access.replaceState(replayed)

        progress?("deleting the place's photos")
        try deletePhotos(merged.photos.subtracting(found.otherPhotos).subtracting(replayed.referencedDigests), of: pin, report: &report)
        try ForgottenPlaces.finished(pin, in: folder, fileSystem: fileSystem)
        try fileSystem.removeFile(forgetMarkerPath)
        try fileSystem.syncDirectory(folder)
        writeReceipt(receipt, pin: pin, plan: merged, report: &report, progress: progress)
        return report
    }

    /// Finishes, before anything reads the store, a forget a crash cut short and the forgets
    /// that arrived from other devices (`forget.arrived`: docs/DEVICES.md).
    func finishForgets() async throws {
        var pins: [PinID] = []
        if let pin = try Self.interruptedForget(in: folder, fileSystem: fileSystem)?.pin { pins.append(pin) }
        let arrived = try ForgottenPlaces.arrived(in: folder, fileSystem: fileSystem)
        if !arrived.isEmpty {
            // A sync cut short between listing a forget and copying it: the event never came,
            // and the next sync that brings it lists it again.
            let copied = try ForgottenPlaces.inLogs(of: folder, fileSystem: fileSystem)
            for pin in arrived where !pins.contains(pin) {
                if copied.contains(pin) { pins.append(pin) } else { try ForgottenPlaces.finished(pin, in: folder, fileSystem: fileSystem) }
            }
        }
        guard !pins.isEmpty else { return }
        _ = try await eraseAgain(pins)
    }

    /// Reads the merged history (this device's log through `ownLast`) for the pin's events and
    /// the map regions zoomed in on one of its places, each by the log that holds it; returns
    /// them as a plan, with the scan.
    private func scanDevices(for pin: PinID, through ownLast: UInt64) throws -> (PlaceScan<EventOrigin>, ForgetPlan) {
        guard let history = try MergedHistory.open(store: folder, fileSystem: fileSystem)?.with(ownLast: ownLast) else {
            throw DomainError(.storage, "the store at \(folder) no longer holds another device's log")
        }
        var found = PlaceScan<EventOrigin>(pin: pin)
        try history.forEach { recorded in
            if let origin = recorded.origin { found.read(recorded, at: origin) }
        }
        var plan = ForgetPlan(pin: pin)
        plan.photos = found.photos
        for (origin, kept) in found.erasing {
            if origin.device == history.local {
                plan.targets[origin.sequence] = kept
            } else {
                plan.copyTargets[origin.device, default: [:]][origin.sequence] = kept
            }
        }
        return (found, plan)
    }
}
