import BlobStore
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

/// `vt forget` in a store of several devices under the simulated disk (docs/DEVICES.md,
/// "Forgetting a place on several devices"): the power goes at every I/O operation of the forget,
/// with each way a disk keeps what was not synced, and separately each operation fails with EIO.
/// Every time the store opens (finishing a forget that had begun) and verifies; every log's heads
/// are unchanged (this device's and the copy's: erasure keeps them); the place is either wholly
/// there, every log's events as they were, or wholly gone from every log, the photos and the
/// state; and forgetting again ends with it gone.
///
/// Heavy, as ``SyncReliabilityTests``, whose checks it shares.
@Suite(.heavy) struct DeviceForgetReliabilityTests {
    typealias Sync = SyncReliabilityTests
    static let phone = Sync.phone
    static let secret = Sync.secret
    static let secretPhotos = (0..<2).map { [0xFF, 0xD8, 0xFF, 0xE0] + Array("SECRET-\($0)".utf8) }

    struct Base {
        var disk: SimulatedDisk
        /// Every log's events, by device, and their heads.
        var events: [DeviceID: [LogEvent]]
        var heads: [DeviceID: [LogHead?]]
    }

    /// The phone with an album at the place; the laptop, its clone, moved the pin and dropped
    /// another; one sync, so that the phone holds the laptop's drag in its copy.
    static func base() async throws -> Base {
        let disk = SimulatedDisk(root: "/disk")
        var store = try await TouristStore.open(at: phone, options: Sync.options([PinID(1), secret]), fileSystem: disk)
        _ = try await store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
        _ = try await store.dropPin(at: Sync.secretPlace)
        let request = try await store.requestAlbum(for: secret, perPage: 2)
        let photos = (0..<2).map { ListedPhoto(remoteID: "s\($0)", url: "https://forget-me.example/\($0).jpg", title: "Secret \($0)") }
        let listing = try await store.recordListing(
            PhotoListing(pin: secret, collection: 1, page: 1, pages: 1, total: 2, photos: photos), cause: request.sequence)
        for (slot, bytes) in secretPhotos.enumerated() {
            let lease = try store.storePhoto(bytes)
            try await store.recordDownload(lease, pin: secret, collection: 1, slot: UInt32(slot), cause: listing.sequence)
            lease.release()
        }
        try await store.close()
        _ = try StoreSync.clone(from: phone, to: Sync.laptop, name: "laptop", options: Sync.options(), fileSystem: disk)
        store = try await TouristStore.open(at: Sync.laptop, options: Sync.options([PinID(4)]), fileSystem: disk)
        try await store.dragPin(secret, to: Coordinate(latitude: 12.35, longitude: -65.44))
        _ = try await store.dropPin(at: Coordinate(latitude: 41.8902, longitude: 12.4922))
        try await store.close()
        _ = try StoreSync.sync(store: phone, with: Sync.laptop, options: Sync.options(), fileSystem: disk)
        var events: [DeviceID: [LogEvent]] = [:]
        var heads: [DeviceID: [LogHead?]] = [:]
        for (device, path) in try logs(on: disk) {
            let reader = try LogReader(directory: path, fileSystem: disk, payloadCodec: EventCodec.blockCodec)
            events[device] = try all(reader)
            heads[device] = try (1...max(1, try reader.lastSequence())).map { try reader.head(at: $0) }
        }
        return Base(disk: disk, events: events, heads: heads)
    }

    static func logs(on disk: SimulatedDisk) throws -> [(DeviceID, String)] {
        let devices = try StoreSync.devices(of: phone, disk)
        return [(devices.this.device, Path.join(phone, "log"))] + devices.copies.map { ($0.id, $0.logPath) }
    }

    static func all(_ reader: LogReader) throws -> [LogEvent] {
        let cursor = try reader.events(from: 1)
        var events: [LogEvent] = []
        while let event = try cursor.next() { events.append(event) }
        return events
    }

    /// Opens the phone, forgets the place, closes it; whatever fails is for the caller to judge.
    static func forget(on disk: SimulatedDisk) async throws {
        let store = try await TouristStore.open(at: phone, options: Sync.options(), fileSystem: disk)
        do { try await store.forget(secret) } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }

    /// What is wrong with the phone on `disk`: ``SyncReliabilityTests``'s checks (it opens,
    /// verifies, keeps its own heads and holds nothing of a place it knows forgotten), every
    /// copy's heads too, and the place wholly there or wholly gone.
    static func problems(on disk: SimulatedDisk, base: Base, mustBeGone: Bool = false) async -> [String] {
        let own = (try? StoreSync.devices(of: phone, disk).this.device).flatMap { base.heads[$0] }
        let (checked, seen) = await Sync.problems([phone], on: disk, heads: [phone: own ?? []])
        guard checked.isEmpty, let state = seen[phone]?.state else { return checked }
        var found: [String] = []
        do {
            var forgotten = false
            var changed: [String] = []
            for (device, path) in try logs(on: disk) {
                let reader = try LogReader(directory: path, fileSystem: disk, payloadCodec: EventCodec.blockCodec)
                for (index, head) in (base.heads[device] ?? []).enumerated() where try reader.head(at: UInt64(index + 1)) != head {
                    found.append("the head after device \(device.short)'s event \(index + 1) changed")
                }
                let events = try all(reader)
                forgotten = forgotten || events.contains { event in
                    if case .placeForgotten(secret, _) = try? EventCodec.decode(event).event { return true }
                    return false
                }
                if Array(events.prefix(base.events[device]?.count ?? 0)) != base.events[device] ?? [] { changed.append(device.short) }
            }
            if !forgotten {
                if mustBeGone { found.append("no PlaceForgotten after the forget ran to its end") }
                if !changed.isEmpty { found.append("events of \(changed) changed without a PlaceForgotten") }
                if state.pins[secret] == nil { found.append("the place is gone without a PlaceForgotten") }
            } else {
                let blobs = try BlobStore(directory: Path.join(phone, "blobs"), fileSystem: disk)
                for bytes in secretPhotos where try blobs.contains(PhotoDigest.of(bytes)) {
                    found.append("a photo of the forgotten place is still stored")
                }
            }
        } catch {
            found.append("the logs cannot be read: \(error)")
        }
        return found
    }

    /// The base, and how many I/O operations a whole forget from it takes.
    static func measured() async throws -> (Base, Int) {
        let base = try await base()
        let whole = base.disk.afterPowerLoss(.keepEverything)
        try await forget(on: whole)
        #expect(await problems(on: whole.afterPowerLoss(.keepEverything), base: base, mustBeGone: true).isEmpty)
        return (base, whole.operationCount)
    }

    @Test(arguments: SimulatedDisk.PowerLoss.allCases)
    func aPowerCutAtEveryOperationOfAForgetLeavesThePlaceWhollyThereOrGoneFromEveryLog(_ loss: SimulatedDisk.PowerLoss) async throws {
        let (base, total) = try await Self.measured()
        var outcomes = (there: 0, gone: 0)
        for cut in 1...total + 1 {
            let disk = base.disk.afterPowerLoss(.keepEverything)
            disk.cutPower(atOperation: cut)
            try? await Self.forget(on: disk)
            let survivor = disk.afterPowerLoss(loss, seed: UInt64(cut))
            let found = await Self.problems(on: survivor, base: base)
            #expect(found.isEmpty, "power cut at I/O \(cut) of \(total) of a forget, \(loss): \(found)")
            let opened = try? await TouristStore.open(at: Self.phone, options: Sync.options(), fileSystem: survivor.afterPowerLoss(.keepEverything))
            if opened?.state.pins[Self.secret] == nil { outcomes.gone += 1 } else { outcomes.there += 1 }
            try? await opened?.close()
            let again = survivor.afterPowerLoss(.keepEverything)
            do { try await Self.forget(on: again) } catch { Issue.record("cut at \(cut), \(loss): forgetting again failed: \(error)") }
            let final = await Self.problems(on: again.afterPowerLoss(.keepEverything), base: base, mustBeGone: true)
            #expect(final.isEmpty, "cut at \(cut), \(loss), then forgotten again: \(final)")
        }
        if loss == .keepEverything { #expect(outcomes.there > 0 && outcomes.gone > 0) }
        print("forget of several devices, power loss \(loss): \(total + 1) cut points; place still there after \(outcomes.there), gone after \(outcomes.gone)")
    }

    @Test func everyFailedOperationOfAForgetLeavesAStoreThatFinishesIt() async throws {
        let (base, total) = try await Self.measured()
        var failures = 0
        for number in 1...total {
            let disk = base.disk.afterPowerLoss(.keepEverything)
            disk.fail { $0.number == number ? EIO : nil }
            var thrown: (any Error)?
            do { try await Self.forget(on: disk) } catch { thrown = error }
            guard let failed = disk.failedOperations.first else { continue }
            if thrown != nil { failures += 1 }
            disk.fail(when: nil)
            let found = await Self.problems(on: disk.afterPowerLoss(.keepEverything), base: base)
            #expect(found.isEmpty, "EIO on \(failed): \(found)")
            let again = disk.afterPowerLoss(.keepEverything)
            do { try await Self.forget(on: again) } catch { Issue.record("EIO on \(failed): forgetting again failed: \(error)") }
            let final = await Self.problems(on: again.afterPowerLoss(.keepEverything), base: base, mustBeGone: true)
            #expect(final.isEmpty, "EIO on \(failed), then forgotten again: \(final)")
        }
        #expect(failures > 0)
        print("forget of several devices, fault EIO: \(total) operations failed in turn, \(failures) reached the caller")
    }
}
