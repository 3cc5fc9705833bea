import DeviceLogs
import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Merged snapshots (docs/FORMAT.md, "Merged snapshot file"): a store of several devices opens
/// from the newest one the logs still begin with, so a late event costs a refold from the fork;
/// one that no longer fits, or is damaged, is passed over and said why.
@Suite struct MergedSnapshotTests {
    let start: Int64 = 1_800_000_000_000_000

    /// A snapshot after every event: a session of one action leaves one at its position.
    func options(_ clock: TestClock) -> StoreOptions { deviceOptions(clock, snapshotInterval: 1) }

    /// The fold of every log from the first event, with no snapshot (this device's log through
    /// `ownLast` when given).
    func foldFromTheStart(_ store: String, ownLast: UInt64? = nil) throws -> TouristState {
        var history = try #require(try MergedHistory.open(store: store, fileSystem: PosixFileSystem()))
        if let ownLast { history = history.with(ownLast: ownLast) }
        return try MergedHistory(local: history.local, logs: history.logs, fileSystem: history.fileSystem).fold().state
    }

    /// The phone drops a pin; the laptop, cloned from it, drops six at a second apart, a
    /// session each (a snapshot at each position; its first record begins with what it had
    /// seen of the phone, a `DeviceSeen`); then the phone, whose clock is behind, drops
    /// one between the laptop's third and fourth, and the laptop takes it.
    func laptopWithALateEvent(_ folder: TemporaryFolder) async throws -> (laptop: String, own: [PinID]) {
        let phoneClock = TestClock(start)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: options(phoneClock))
        _ = try await phone.dropPin(at: Coordinate(latitude: 10, longitude: 10))
        try await phone.close()
        let laptopClock = TestClock(start + 10_000_000)
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: options(laptopClock))
        var own: [PinID] = []
        for index in 1...6 {
            let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: options(laptopClock))
            #expect(laptop.report.snapshot == (index == 1 ? nil : UInt64(index + 1)))
            laptopClock.set(start + Int64(index) * 1_000_000)
            own.append(try await laptop.dropPin(at: Coordinate(latitude: Double(index), longitude: 20)))
            try await laptop.close()
        }
        #expect(try SnapshotFolder(path: folder.sub("laptop") + "/snapshots", fileSystem: PosixFileSystem(), interval: 1).mergedPositions() == [3, 4, 5, 6, 7, 8])

        phoneClock.set(start + 3_500_000)
        let late = try await TouristStore.open(at: folder.sub("phone"), options: options(phoneClock))
        _ = try await late.dropPin(at: Coordinate(latitude: 30, longitude: 30))
        try await late.close()
        let synced = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        #expect(synced.eventsTaken == 1)
        return (folder.sub("laptop"), own)
    }

    @Test func aLateEventRefoldsFromTheNewestSnapshotBeforeTheFork() async throws {
        let folder = TemporaryFolder.made("merged-snapshots")
        let (path, own) = try await laptopWithALateEvent(folder)
        // The merged order: the phone's pin (1), the laptop's DeviceSeen and first three (2–5),
        // the phone's late one (6), the laptop's last three (7–9). Snapshots 6, 7 and 8 end after
        // the fork.
        let laptop = try await TouristStore.open(at: path, options: options(TestClock(start + 20_000_000)))
        #expect(laptop.report.snapshot == 5 && laptop.report.replayedEvents == 4 && laptop.state.sequence == 9)
        let passedOver = laptop.report.skippedSnapshots.map(\.file).map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(passedOver == [8, 7, 6].map(MergedSnapshotFile.name(for:)))
        #expect(laptop.report.skippedSnapshots.allSatisfy { $0.reason.contains("belongs before its last event in the merged order") })
        #expect(laptop.state == (try foldFromTheStart(path)))
        // Where the laptop's own events lie came from the snapshot: a cause named by the
        // position of its first pin's drop (3) is its own event 2.
        // (Its record begins with a DeviceSeen of the phone's late event, own event 8.)
        let asked = try await laptop.requestAlbum(for: own[0], perPage: 2, cause: 3)
        #expect(asked.cause == 2 && asked.origin?.sequence == 9 && asked.sequence == 11)
        // Time travel starts from a snapshot that fits too.
        #expect(try laptop.state(at: 6) == (try foldFromTheStart(path, ownLast: 4)))
        // The slider moving on: from the state at 6, reading on from snapshot 5's frontier alone.
        #expect(try laptop.state(at: 7) == (try foldFromTheStart(path, ownLast: 5)))
        try await laptop.close()

        let again = try await TouristStore.open(at: path, options: options(TestClock(start + 30_000_000)))
        #expect(again.report.snapshot == 11 && again.report.replayedEvents == 0 && again.report.skippedSnapshots.isEmpty)
        #expect(again.state == (try foldFromTheStart(path)))
        try await again.close()
    }

    @Test func aDamagedSnapshotIsPassedOverForAnOlderOne() async throws {
        let folder = TemporaryFolder.made("merged-snapshot-damage")
        let (path, _) = try await laptopWithALateEvent(folder)
        let first = try await TouristStore.open(at: path, options: options(TestClock(start + 20_000_000)))
        try await first.close()  // a snapshot at 9, which fits
        let file = path + "/snapshots/" + MergedSnapshotFile.name(for: 9)
        var bytes = try #require(FileManager.default.contents(atPath: file))
        bytes[bytes.count - 10] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: file))

        let reopened = try await TouristStore.open(at: path, options: options(TestClock(start + 30_000_000)))
        #expect(reopened.report.snapshot == 5 && reopened.report.skippedSnapshots.count == 4)
        #expect(reopened.report.skippedSnapshots.first?.reason == "its payload fails its checksum")
        #expect(reopened.state == (try foldFromTheStart(path)))
        try await reopened.close()
    }

    /// A snapshot folded by the rules of an earlier version (its frontier's version) may hold a
    /// verdict the rules now give otherwise: it is passed over, said why, and the store folds again.
    @Test func aSnapshotOfTheRulesBeforeIsPassedOver() async throws {
        let folder = TemporaryFolder.made("merged-snapshot-rules")
        let (path, _) = try await laptopWithALateEvent(folder)
        let first = try await TouristStore.open(at: path, options: options(TestClock(start + 20_000_000)))
        try await first.close()  // a snapshot at 9, which fits
        let positions = try SnapshotFolder(path: path + "/snapshots", fileSystem: PosixFileSystem(), interval: 1).mergedPositions()
        #expect(positions.count >= 2)
        for position in positions {
            let file = path + "/snapshots/" + MergedSnapshotFile.name(for: position)
            var bytes = try #require(FileManager.default.contents(atPath: file))
            bytes[8] = 1  // the frontier's version, u16 little-endian
            try bytes.write(to: URL(fileURLWithPath: file))
        }
        let reopened = try await TouristStore.open(at: path, options: options(TestClock(start + 30_000_000)))
        #expect(reopened.report.snapshot == nil && reopened.report.skippedSnapshots.count == positions.count)
        #expect(reopened.report.skippedSnapshots.allSatisfy { $0.reason.contains("folded by the rules of version 1") }, "\(reopened.report.skippedSnapshots)")
        #expect(reopened.state == (try foldFromTheStart(path)))
        try await reopened.close()
    }

    @Test func aStoreOfOneDeviceOpensAsOneOfSeveralFromItsOwnSnapshotsThatStillFit() async throws {
        let folder = TemporaryFolder.made("merged-from-snap")
        let phoneClock = TestClock(start)
        var phoneOptions = storeOptions(clock: phoneClock)  // snapshots on close only
        phoneOptions.pinIDs = RandomPinIDs()
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: phoneOptions)
        let asked = try await phone.dropPin(at: Coordinate(latitude: 10, longitude: 10))
        _ = try await phone.requestAlbum(for: asked, perPage: 2)
        _ = try await phone.dropPin(at: Coordinate(latitude: 11, longitude: 10))
        try await phone.close()  // 3.snap
        let laptopClock = TestClock(start + 50_000_000)
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: options(laptopClock))
        phoneClock.set(start + 100_000_000)
        let again = try await TouristStore.open(at: folder.sub("phone"), options: phoneOptions)
        _ = try await again.dropPin(at: Coordinate(latitude: 12, longitude: 10))
        try await again.close()  // 4.snap, after the laptop's drop in time
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: options(laptopClock))
        _ = try await laptop.dropPin(at: Coordinate(latitude: 13, longitude: 10))
        try await laptop.close()
        let synced = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        #expect(synced.eventsTaken == 2, "the laptop's DeviceSeen and drop")

        // The phone is a device of several now: its 4.snap ends after the laptop's drop, its
        // 3.snap before it, and serves as the merged fold of its own first three events.
        let merged = try await TouristStore.open(at: folder.sub("phone"), options: phoneOptions)
        #expect(merged.report.snapshot == 3 && merged.report.replayedEvents == 3 && merged.state.sequence == 6)
        #expect(merged.report.skippedSnapshots.map(\.file).map { URL(fileURLWithPath: $0).lastPathComponent } == [SnapshotFile.name(for: 4)])
        let phoneDevice = try StoreSync.devices(of: folder.sub("phone")).this.device
        #expect(merged.state.localDevice == phoneDevice && merged.state.pins[asked]?.album.requestedBy == phoneDevice)
        #expect(merged.state == (try foldFromTheStart(folder.sub("phone"))))
        try await merged.close()
    }

    @Test func aFrontierReadsBackAndOneThatBreaksTheRulesIsRefused() throws {
        let phone = DeviceID.random(), laptop = DeviceID.random()
        func log(_ device: DeviceID, _ last: UInt64) -> MergedFrontier.Log {
            MergedFrontier.Log(
                device: device, last: last, lastTime: LogTimestamp(microsecondsSinceEpoch: Int64(last) * 7),
                head: [UInt8](repeating: UInt8(last), count: 32))
        }
        // The laptop's 4 events at positions 2–4 and 9, the phone's 5 at the others.
        let frontier = MergedFrontier(
            local: laptop, logs: [log(phone, 5), log(laptop, 4)].sorted { $0.device < $1.device },
            runs: [MergedFrontier.Run(position: 2, first: 1, count: 3), MergedFrontier.Run(position: 9, first: 4, count: 1)])
        #expect(frontier.position == 9 && frontier.problem == nil)
        let bytes = frontier.encoded()
        #expect(try bytes.withUnsafeBytes { try MergedFrontier.decode($0) }.0 == frontier)

        var flipped = bytes
        flipped[50] ^= 1
        #expect(throws: SnapshotProblem.self) { try flipped.withUnsafeBytes { try MergedFrontier.decode($0) } }
        var unordered = frontier
        unordered.logs.reverse()  // the two, descending
        #expect(unordered.problem == "lists its logs out of order or twice")
        var miscounted = frontier
        miscounted.runs[1].count = 2
        #expect(miscounted.problem != nil)
        var elsewhere = frontier
        elsewhere.local = DeviceID.random()
        #expect(elsewhere.problem == "does not list the local device's log")
    }
}
