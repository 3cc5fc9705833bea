import BlobStore
import EventLog
import FileIO
import Synchronization

/// What forgetting a place did.
public struct ForgetReport: Sendable, Hashable {
    public var pin: PinID
    /// The sequence number of the `PlaceForgotten` event.
    public var sequence: UInt64 = 0
    /// Events whose payload is now erased: the pin's, and map regions zoomed in on it.
    public var erasedEvents: UInt64 = 0
    public var photosDeleted = 0
    public var snapshotsRewritten = 0
    /// Snapshots removed: a store of several devices never reads them (docs/DEVICES.md).
    public var snapshotsRemoved = 0
    public var quarantinedFilesRemoved = 0
    /// Whether `log.format1/` (the log before `vt upgrade`, holding every payload) was removed.
    public var formerLogRemoved = false
    /// Whether this finished a forget that a crash or failure had interrupted.
    public var resumed = false
    /// Where the forget's erasure receipt was written (docs/PROOFS.md, "Erasure receipts"), or
    /// why there is none (a forget finished after an interruption has none: its head before was
    /// never signed).
    public var receipt: String?
    public var receiptProblem: String?
}

extension TouristStore {
    /// The marker of a forget under way (docs/EVENTS.md, "Forgetting a place"): it holds the
    /// forget's plan (``ForgetPlan``), and the next open finishes the forget from it.
    static let forgetMarkerName = "forget.pending"
    var forgetMarkerPath: String { Path.join(folder, Self.forgetMarkerName) }
    /// A map region at most this tall, holding a place, shows where the person looked: it is
    /// forgotten with the place. A wider one (a country, a continent) says nothing about it.
    static let forgottenRegionSpan = 2.0

    /// Forgets a place: the pin leaves the map, and every event about it — with the map regions
    /// zoomed in on it — has its payload erased from every file of the store (the log's hot tail
    /// and blocks, the snapshots, `quarantine/`, `log.format1/`); its photos are deleted at
    /// once. What stays: sequence numbers, times, types and payload digests, so the chain (the
    /// head hash after every earlier event) is unchanged; and a `PlaceForgotten` event naming
    /// the pin and how many events were erased. Actions wait while it runs. After a crash the
    /// next open finishes it.
    ///
    /// - Throws: ``DomainError``: `.unknownPin` when the history never had the pin;
    ///   `.invalidArgument` for a format-1 log (upgrade first); `.storage`.
    @discardableResult
    public func forget(_ pin: PinID, progress: (@Sendable (String) -> Void)? = nil) async throws -> ForgetReport {
        if let refusal = processor.refusal { throw DomainError(.readOnly, refusal) }
        guard log.format == .v2 else {
            throw DomainError(.invalidArgument, "the store at \(folder) has a format-1 log, which cannot erase events; run vt upgrade first")
        }
        let resumed = (try? fileSystem.exists(forgetMarkerPath)) ?? false
        let outcome = Mutex<Result<ForgetReport, any Error>?>(nil)
        try await processor.exclusively { [self] access in
            do {
                var report = try await forgetExclusively(pin, access: access, progress: progress)
                report.resumed = resumed
                outcome.withLock { $0 = .success(report) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        return try outcome.withLock { $0! }.get()
    }

    func forgetExclusively(
        _ pin: PinID, access: ActionProcessor.ExclusiveAccess, progress: (@Sendable (String) -> Void)?
    ) async throws -> ForgetReport {
        // A forget of another place that failed earlier is finished first: one plan at a time.
        var plan = try Self.interruptedForget(in: folder, fileSystem: fileSystem)
        if let other = plan, other.pin != pin {
            _ = try await forgetExclusively(other.pin, access: access, progress: progress)
            plan = nil
        }
        if localDevice != nil { return try await forgetMerged(pin, plan: plan, access: access, progress: progress) }
        var report = ForgetReport(pin: pin)
        var receipt: Result<ReceiptStart, DomainError>?
        progress?("reading the history for pin \(pin)")
        let found = try scan(for: pin, through: access.state.sequence)
        guard found.mentioned || plan != nil else { throw TouristState.unknownPin(pin) }
        var merged = plan ?? ForgetPlan(pin: pin)
        for (sequence, kept) in found.erasing where merged.targets[sequence] == nil { merged.targets[sequence] = kept }
        merged.photos.formUnion(found.photos)
        if merged != plan { try writeForgetMarker(merged) }

        if let sequence = found.forgottenAt {
            report.sequence = sequence
        } else if let refusal = processor.refusal {
            // A replica erases only what its original forgot, and never appends.
            throw DomainError(.readOnly, refusal)
        } else {
            receipt = startReceipt(progress: progress)
            let recorded = try await access.append([.placeForgotten(pin: pin, erasedEvents: UInt64(merged.targets.count))])
            report.sequence = recorded[0].sequence
        }
        progress?("erasing \(merged.targets.count) events from the log")
        forgetTimeTravelMemo()
        defer { forgetTimeTravelMemo() }
        let erasure: ErasureReport
        do { erasure = try log.erase(merged.targets) } catch {
            throw Self.storageError(error, "could not erase pin \(pin)'s events from the log of \(folder)")
        }
        report.erasedEvents = erasure.erased + erasure.alreadyErased
        report.quarantinedFilesRemoved = erasure.quarantinedFilesRemoved

        progress?("rewriting the snapshots")
        await access.snapshotsSettled()
        let (replayed, rewritten) = try rewriteSnapshots(from: merged.targets.keys.min(), through: access.state.sequence)
        report.snapshotsRewritten = rewritten
        access.replaceState(replayed)

        progress?("deleting the place's photos")
        try deletePhotos(merged.photos.subtracting(found.otherPhotos).subtracting(replayed.referencedDigests), of: pin, report: &report)
        try fileSystem.removeFile(forgetMarkerPath)
        try fileSystem.syncDirectory(folder)
        writeReceipt(receipt, pin: pin, plan: merged, report: &report, progress: progress)
        return report
    }

    /// Finishes the receipt a fresh forget started, or says why there is none.
    func writeReceipt(
        _ start: Result<ReceiptStart, DomainError>?, pin: PinID, plan: ForgetPlan, report: inout ForgetReport,
        progress: (@Sendable (String) -> Void)?
    ) {
        switch start {
        case nil:
            report.receiptProblem =
                "no erasure receipt: this forget appended no PlaceForgotten here (it was begun before and cut short, or it came from another device), so no head was signed before it"
        case .failure(let error):
            report.receiptProblem = error.message
        case .success(let start):
            do {
                report.receipt = try finishReceipt(
                    start, pin: pin, own: Array(plan.targets.keys), copies: plan.copyTargets.mapValues { Array($0.keys) }, report: report,
                    progress: progress)
            } catch {
                report.receiptProblem = (error as? DomainError)?.message ?? "no erasure receipt: \(error)"
            }
        }
    }

    /// The forget's last erasing steps: the place's photos, and `log.format1/` (the log before
    /// `vt upgrade`, holding every payload).
    func deletePhotos(_ photos: Set<PhotoDigest>, of pin: PinID, report: inout ForgetReport) throws {
        for digest in photos {
            do { if try blobs.remove(digest) { report.photosDeleted += 1 } } catch {
                throw Self.storageError(error, "could not delete photo \(digest) of pin \(pin)")
            }
        }
        let former = LogUpgrade.formerPath(of: logPath)
        if try fileSystem.exists(former) {
            try fileSystem.removeTree(former)
            try fileSystem.syncDirectory(folder)
            report.formerLogRemoved = true
        }
    }

    /// Erases again what every `PlaceForgotten` in the log says was forgotten (a store restored
    /// from a replication stream, which keeps what it was sent, holds those events whole):
    /// each such place as ``forget(_:progress:)`` erases it, with no new event. Places whose
    /// events are erased already cost a read of the log each, and change nothing.
    ///
    /// - Returns: one report per place forgotten in the history, in the order forgotten.
    /// - Throws: ``DomainError`` `.storage`.
    @discardableResult
    public func eraseForgottenPlaces() async throws -> [ForgetReport] {
        guard log.format == .v2, lastSequence > 0 else { return [] }
        let forgotten = try forgottenPlaces(in: 1...lastSequence)
        return try await eraseAgain(forgotten)
    }

    /// The pins that `PlaceForgotten` events in `range` name, in order.
    func forgottenPlaces(in range: ClosedRange<UInt64>) throws -> [PinID] {
        let cursor = try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
            .events(from: range.lowerBound, through: range.upperBound)
        var pins: [PinID] = []
        while let event = try cursor.next() {
            guard !event.isErased, case .placeForgotten(let pin, _) = try EventCodec.decode(event).event else { continue }
            if !pins.contains(pin) { pins.append(pin) }
        }
        return pins
    }

    func eraseAgain(_ pins: [PinID]) async throws -> [ForgetReport] {
        guard !pins.isEmpty else { return [] }
        let outcome = Mutex<Result<[ForgetReport], any Error>?>(nil)
        try await processor.exclusively { [self] access in
            do {
                var reports: [ForgetReport] = []
                for pin in pins { reports.append(try await forgetExclusively(pin, access: access, progress: nil)) }
                outcome.withLock { $0 = .success(reports) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        return try outcome.withLock { $0! }.get()
    }

    private func scan(for pin: PinID, through last: UInt64) throws -> PlaceScan<UInt64> {
        var found = PlaceScan<UInt64>(pin: pin)
        guard last > 0 else { return found }
        let reader = try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
        let cursor = try reader.events(from: 1, through: last)
        while let event = try cursor.next() {
            let recorded = try EventCodec.decode(event)
            found.read(recorded, at: recorded.sequence)
        }
        return found
    }

    /// Writes again every snapshot from `first` on, from a replay of the erased log, and returns
    /// the state after `last` (the erased history read again) and how many were rewritten.
    private func rewriteSnapshots(from first: UInt64?, through last: UInt64) throws -> (TouristState, Int) {
        let reader = try LogReader(directory: log.directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
        let all = try snapshots.sequences()
        let stale = all.filter { $0 >= (first ?? .max) && $0 <= last }
        // Start from a snapshot the forget does not touch, or from the beginning.
        var state = TouristState()
        if let base = all.last(where: { $0 < (first ?? .max) && $0 <= last }), let (_, loaded) = try? snapshots.load(base) {
            state = loaded
        }
        var rewritten = 0
        for target in stale {
            state = try Self.replay(reader, from: state, through: target)
            guard let head = try reader.head(at: target) else { continue }
            try snapshots.write(state, head: head)
            rewritten += 1
        }
        state = try Self.replay(reader, from: state, through: last)
        return (state, rewritten)
    }

    func writeForgetMarker(_ plan: ForgetPlan) throws {
        try ForgetProgress.countOneMore(in: folder, fileSystem: fileSystem)
        try fileSystem.writeAtomically(plan.encoded(), to: forgetMarkerPath)
        try fileSystem.syncDirectory(folder)
    }

    /// The plan of an interrupted forget, if there is one. A marker cut off while it was written
    /// (its `.tmp`) means the forget had not begun: it is removed.
    static func interruptedForget(in folder: String, fileSystem: any FileSystem) throws -> ForgetPlan? {
        let path = Path.join(folder, forgetMarkerName)
        if try fileSystem.exists(path + ".tmp") {
            try fileSystem.removeFile(path + ".tmp")
            try fileSystem.syncDirectory(folder)
        }
        guard try fileSystem.exists(path) else { return nil }
        guard let plan = ForgetPlan(try fileSystem.openFile(path, .readOnly).readAll()) else {
            throw DomainError(.storage, "\(path) is not a forget's plan; remove it if no forget is under way")
        }
        return plan
    }
}
extension MapRegion {
    /// Whether `place` is inside the region's rectangle.
    func shows(_ place: Coordinate) -> Bool {
        let east = abs((place.longitude - center.longitude + 540).truncatingRemainder(dividingBy: 360) - 180)
        return abs(place.latitude - center.latitude) <= latitudeSpan / 2 && east <= longitudeSpan / 2
    }
}
