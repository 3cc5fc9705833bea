import DeviceLogs
import EventLog
import FileIO
import Foundation
import ReliabilitySupport
import StorageTestSupport
import Testing

@testable import VirtualTourist

#if canImport(Glibc)
    import Glibc
#endif

/// `vt sync` and `vt clone` under the simulated disk (docs/DEVICES.md, "Commands": safe to
/// interrupt anywhere): the power goes at every I/O operation, with each way a disk keeps what
/// was not synced, and separately each operation fails with EIO. Every time, both
/// stores open and verify, no device's own events are lost or changed, a store that holds a
/// forget holds nothing of the place whole, and a sync run again afterwards brings both to the
/// same history, heads and state, with the place gone from both.
///
/// Heavy: this many syncs and audits on the cooperative pool would starve the suite's timed
/// tests of threads (docs/DEVELOPING.md, "Tests and the cooperative pool").
@Suite(.heavy) struct SyncReliabilityTests {
    static let phone = "/disk/phone"
    static let laptop = "/disk/laptop"
    static let tablet = "/disk/tablet"
    static let secret = PinID(0x5EC2_E700_0000_0002)
    static let secretPlace = Coordinate(latitude: 12.3456789, longitude: -65.4321987)

    static func options(_ pins: [PinID] = []) -> StoreOptions {
        var options = crashTestOptions()
        options.pinIDs = ListedPinIDs(pins)
        options.collectionInterval = nil
        return options
    }

    /// The phone and its clone, the laptop, have each acted since they last met: the phone
    /// forgot a place that the laptop moved meanwhile, and both dropped pins.
    static func base() async throws -> SimulatedDisk {
        let disk = SimulatedDisk(root: "/disk")
        var store = try await TouristStore.open(
            at: phone, options: options([PinID(1), secret]), fileSystem: disk)
        _ = try await store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
        _ = try await store.dropPin(at: secretPlace)
        let request = try await store.requestAlbum(for: secret, perPage: 2)
        let photos = (0..<2).map {
            ListedPhoto(
                remoteID: "s\($0)", url: "https://forget-me.example/\($0).jpg", title: "Secret \($0)")
        }
        let listing = try await store.recordListing(
            PhotoListing(pin: secret, collection: 1, page: 1, pages: 1, total: 2, photos: photos),
            cause: request.sequence)
        for slot in 0..<2 {
            let lease = try store.storePhoto([0xFF, 0xD8, 0xFF, 0xE0] + Array("SECRET-\(slot)".utf8))
            try await store.recordDownload(
                lease, pin: secret, collection: 1, slot: UInt32(slot), cause: listing.sequence)
            lease.release()
        }
        try await store.close()
        _ = try StoreSync.clone(
            from: phone, to: laptop, name: "laptop", options: options(), fileSystem: disk)

        store = try await TouristStore.open(at: laptop, options: options([PinID(4)]), fileSystem: disk)
        try await store.dragPin(secret, to: Coordinate(latitude: 12.35, longitude: -65.44))
        _ = try await store.dropPin(at: Coordinate(latitude: 41.8902, longitude: 12.4922))
        try await store.close()
        store = try await TouristStore.open(at: phone, options: options([PinID(3)]), fileSystem: disk)
        try await store.forget(secret)
        _ = try await store.dropPin(at: Coordinate(latitude: -33.8568, longitude: 151.2153))
        try await store.close()
        return disk
    }

    /// A sync as `vt sync` runs it: forgets finished before and after.
    static func sync(on disk: SimulatedDisk) async throws {
        for store in [laptop, phone] {
            _ = try await StoreSync.finishForgets(in: store, options: options(), fileSystem: disk)
        }
        _ = try StoreSync.sync(store: laptop, with: phone, options: options(), fileSystem: disk)
        for store in [laptop, phone] {
            _ = try await StoreSync.finishForgets(in: store, options: options(), fileSystem: disk)
        }
    }

    /// Each store's own log's heads, by sequence.
    static func ownHeads(_ store: String, on disk: any FileSystem) throws -> [LogHead?] {
        let reader = try LogReader(
            directory: Path.join(store, "log"), fileSystem: disk, payloadCodec: EventCodec.blockCodec)
        return try (1...max(1, try reader.lastSequence())).map { try reader.head(at: $0) }
    }

    struct Seen: Equatable {
        var history: [String]
        var state: TouristState
    }

    /// What is wrong with `stores` on `disk` after a failure: each must open (finishing what a
    /// forget left) and verify, keep its own log's heads, and hold nothing of a place it knows
    /// forgotten. Returns what each store folds, for the caller's comparisons.
    /// `verifying`: with `vt verify`'s whole audit of each store (the caller checked it once
    /// already when false).
    static func problems(
        _ stores: [String], on disk: SimulatedDisk, heads: [String: [LogHead?]], verifying: Bool = true
    ) async -> (problems: [String], seen: [String: Seen]) {
        var found: [String] = []
        var seen: [String: Seen] = [:]
        for store in stores {
            do {
                let opened = try await TouristStore.open(at: store, options: options(), fileSystem: disk)
                var state = opened.state
                try await opened.close()
                state.localDevice = nil
                state.region = nil
                let shown = state
                let (problems, history) = try audit(store, on: disk, heads: heads[store], showing: shown, verifying: verifying)
                found += problems
                seen[store] = Seen(history: history, state: state)
            } catch {
                found.append("\(store): \(error)")
            }
        }
        return (found, seen)
    }

    /// The checks of ``problems(_:on:heads:)`` that read the files.
    static func audit(
        _ store: String, on disk: SimulatedDisk, heads expected: [LogHead?]?,
        showing state: TouristState, verifying: Bool
    ) throws -> ([String], [String]) {
        var found: [String] = []
        let verification = verifying ? try StoreAudit.verify(folder: store, checkPhotoContents: true, fileSystem: disk) : nil
        if let verification, !verification.isClean {
            found.append("\(store) does not verify: \(verification.problems.prefix(3))")
        }
        if let expected, try ownHeads(store, on: disk).prefix(expected.count) != expected[...] {
            found.append("\(store)'s own log lost or changed events")
        }
        let devices = try StoreSync.devices(of: store, disk)
        var history: [String] = []
        try StoreReader.open(at: store, fileSystem: disk).forEachEvent {
            history.append(
                "\(($0.origin?.device ?? devices.this.device).short)#\($0.origin?.sequence ?? $0.sequence)")
        }
        let logs =
            [(devices.this.device, Path.join(store, "log"))] + devices.copies.map { ($0.id, $0.logPath) }
        var forgotten = false
        var whole: [String] = []
        for (device, path) in logs {
            let cursor = try LogReader(
                directory: path, fileSystem: disk, payloadCodec: EventCodec.blockCodec
            ).events(from: 1)
            while let event = try cursor.next() {
                let recorded = try EventCodec.decode(event)
                if case .placeForgotten(secret, _) = recorded.event {
                    forgotten = true
                } else if recorded.event.pin == secret {
                    whole.append("\(device.short)#\(event.sequence)")
                }
            }
        }
        if forgotten, !whole.isEmpty {
            found.append("\(store) knows the place forgotten but holds \(whole) whole")
        }
        if forgotten, state.pins[secret] != nil {
            found.append("\(store) still shows the forgotten place")
        }
        return (found, history)
    }

    /// After a failure and recovery, a sync run whole must bring both devices together.
    static func convergence(after disk: SimulatedDisk, heads: [String: [LogHead?]]) async -> [String] {
        let again = disk.afterPowerLoss(.keepEverything)
        do { try await sync(on: again) } catch { return ["syncing again failed: \(error)"] }
        let (found, seen) = await problems([laptop, phone], on: again, heads: heads, verifying: false)
        guard found.isEmpty, let a = seen[laptop], let b = seen[phone] else { return found }
        var problems: [String] = []
        if a.history != b.history { problems.append("the merged histories differ after syncing again") }
        if a.state != b.state { problems.append("the states differ after syncing again") }
        if a.state.pins[secret] != nil { problems.append("the forgotten place is back") }
        return problems
    }

    /// The base, each device's own heads in it, and how many I/O operations a whole sync from
    /// it takes (after which the devices must agree).
    static func measuredSync() async throws -> (base: SimulatedDisk, heads: [String: [LogHead?]], operations: Int) {
        let base = try await base()
        let heads = [laptop: try ownHeads(laptop, on: base), phone: try ownHeads(phone, on: base)]
        let whole = base.afterPowerLoss(.keepEverything)
        try await sync(on: whole)
        #expect(await convergence(after: whole, heads: heads).isEmpty)
        return (base, heads, whole.operationCount)
    }

    @Test(arguments: SimulatedDisk.PowerLoss.allCases)
    func aPowerCutAtEveryOperationOfASyncLeavesBothStoresWholeAndTheNextSyncFinishesIt(
        _ loss: SimulatedDisk.PowerLoss
    ) async throws {
        let (base, heads, total) = try await Self.measuredSync()
        for cut in 1...total + 1 {
            let disk = base.afterPowerLoss(.keepEverything)
            disk.cutPower(atOperation: cut)
            try? await Self.sync(on: disk)
            let survivor = disk.afterPowerLoss(loss, seed: UInt64(cut))
            let found = await Self.problems([Self.laptop, Self.phone], on: survivor, heads: heads)
                .problems
            #expect(found.isEmpty, "power cut at I/O \(cut) of \(total) of a sync, \(loss): \(found)")
            let after = await Self.convergence(after: survivor, heads: heads)
            #expect(
                after.isEmpty,
                "power cut at I/O \(cut) of \(total) of a sync, \(loss), then synced again: \(after)")
        }
        print("sync, power loss \(loss): \(total + 1) cut points")
    }

    /// EIO only: a sync handles every failed operation alike (what the log does with a full disk
    /// is FullDiskTests' and ForgetReliabilityTests' to show), and each code costs seconds here.
    @Test(arguments: [EIO])
    func everyFailedOperationOfASyncLeavesBothStoresWholeAndTheNextSyncFinishesIt(_ code: Int32)
        async throws
    {
        let (base, heads, total) = try await Self.measuredSync()
        var failures = 0
        for number in 1...total {
            let disk = base.afterPowerLoss(.keepEverything)
            disk.fail { $0.number == number ? code : nil }
            var thrown: (any Error)?
            do { try await Self.sync(on: disk) } catch { thrown = error }
            guard let failed = disk.failedOperations.first else { continue }
            if thrown != nil { failures += 1 }
            disk.fail(when: nil)
            let found = await Self.problems(
                [Self.laptop, Self.phone], on: disk.afterPowerLoss(.keepEverything), heads: heads
            ).problems
            #expect(found.isEmpty, "\(IOError.name(for: code)) on \(failed): \(found)")
            let after = await Self.convergence(after: disk, heads: heads)
            #expect(after.isEmpty, "\(IOError.name(for: code)) on \(failed), then synced again: \(after)")
        }
        #expect(failures > 0)
        print(
            "sync, fault \(IOError.name(for: code)): \(total) operations failed in turn, \(failures) reached the caller"
        )
    }

    @Test(arguments: SimulatedDisk.PowerLoss.allCases)
    func aPowerCutAtEveryOperationOfACloneLeavesNothingOrAWholeDevice(_ loss: SimulatedDisk.PowerLoss)
        async throws
    {
        let base = try await Self.base()
        let heads = [Self.phone: try Self.ownHeads(Self.phone, on: base)]
        let whole = base.afterPowerLoss(.keepEverything)
        _ = try StoreSync.clone(
            from: Self.phone, to: Self.tablet, name: "tablet", options: Self.options(),
            fileSystem: whole)
        let total = whole.operationCount
        let (_, expected) = await Self.problems(
            [Self.phone], on: whole.afterPowerLoss(.keepEverything), heads: heads)
        var outcomes = (nothing: 0, whole: 0)
        for cut in 1...total + 1 {
            let disk = base.afterPowerLoss(.keepEverything)
            disk.cutPower(atOperation: cut)
            _ = try? StoreSync.clone(
                from: Self.phone, to: Self.tablet, name: "tablet", options: Self.options(),
                fileSystem: disk)
            let survivor = disk.afterPowerLoss(loss, seed: UInt64(cut))
            if try survivor.exists(Self.tablet) {
                outcomes.whole += 1
                let (found, seen) = await Self.problems(
                    [Self.tablet, Self.phone], on: survivor, heads: heads)
                #expect(found.isEmpty, "power cut at I/O \(cut) of \(total) of a clone, \(loss): \(found)")
                #expect(
                    seen[Self.tablet]?.state == expected[Self.phone]?.state,
                    "cut at \(cut), \(loss): the clone folds another state")
            } else {
                outcomes.nothing += 1
                // Cloning again removes what the cut left beside the destination and makes it whole.
                let again = survivor.afterPowerLoss(.keepEverything)
                do {
                    _ = try StoreSync.clone(
                        from: Self.phone, to: Self.tablet, name: "tablet", options: Self.options(),
                        fileSystem: again)
                    let (found, seen) = await Self.problems([Self.tablet], on: again, heads: [:])
                    #expect(
                        found.isEmpty && seen[Self.tablet]?.state == expected[Self.phone]?.state,
                        "cut at \(cut), \(loss), cloned again: \(found)")
                } catch {
                    Issue.record("cut at \(cut), \(loss): cloning again failed: \(error)")
                }
            }
        }
        if loss == .keepEverything { #expect(outcomes.nothing > 0 && outcomes.whole > 0) }
        print(
            "clone, power loss \(loss): \(total + 1) cut points; nothing at the destination after \(outcomes.nothing), a whole device after \(outcomes.whole)"
        )
    }
}
