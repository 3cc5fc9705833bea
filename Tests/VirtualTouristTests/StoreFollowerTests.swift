import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// `vt log --follow` across devices (`StoreFollower`): this device's new events, and those a
/// sync brings, each at its position in the merged order as it is when it lands; events that
/// sort before ones already given are counted as late.
@Suite struct StoreFollowerTests {
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    @Test func aFollowerGivesOwnEventsThenASyncsLateOnesAtTheirPositions() async throws {
        let folder = TemporaryFolder.made("follower")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: paris)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        // The laptop acts first (earlier times); its events reach the phone only later.
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        try await laptop.dragPin(pin, to: rome)
        try await laptop.close()
        _ = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))  // gives the phone the laptop's log…
        let synced = try allEvents(inStore: folder.sub("phone"))
        #expect(synced.count == 3, "the drop, the laptop's DeviceSeen and drag")

        var follower = StoreFollower(after: try StoreReader.open(at: folder.sub("phone")))
        #expect(try follower.poll() == nil, "nothing landed")
        let onPhone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await onPhone.dragPin(pin, to: paris)
        try await onPhone.close()
        let own = try #require(try follower.poll())
        #expect(own.late == 0 && own.events.map(\.sequence) == [4, 5], "the phone's DeviceSeen of the laptop and its drag")
        #expect(try own.events == Array(allEvents(inStore: folder.sub("phone"))[3...]))
        #expect(try follower.poll() == nil)

        // A device that acted while away: the tablet, cloned from the laptop (which has not seen
        // the phone's last drag) and with its clock behind, drops a pin; a sync brings its events
        // to the phone, where they sort before the phone's last two.
        let behind = TestClock(1_800_000_000_000_000, stepPerReading: 1)
        _ = try StoreSync.clone(from: folder.sub("laptop"), to: folder.sub("tablet"), name: "tablet", options: deviceOptions(behind))
        let tablet = try await TouristStore.open(at: folder.sub("tablet"), options: deviceOptions(behind))
        let dropped = try await tablet.dropPin(at: rome)
        try await tablet.close()
        _ = try StoreSync.sync(store: folder.sub("tablet"), with: folder.sub("phone"))
        let arrived = try #require(try follower.poll())
        let now = try allEvents(inStore: folder.sub("phone"))
        #expect(arrived.events.count == 3 && arrived.events.last?.event == .pinDropped(dropped, rome), "the tablet's DeviceSeen of each and its drop")
        #expect(arrived.events.allSatisfy { now[Int($0.sequence) - 1] == $0 }, "each at its position now")
        #expect(arrived.late == 3 && arrived.events.map(\.sequence) == [4, 5, 6], "all sort before the phone's last two events")
        #expect(try follower.poll() == nil)
    }

    @Test func aStoreOfOneDeviceFollowedWhileItBecomesOneOfSeveral() async throws {
        let folder = TemporaryFolder.made("follower-becomes-several")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: paris)
        try await phone.close()
        var follower = StoreFollower(after: try StoreReader.open(at: folder.sub("phone")))
        let again = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await again.dragPin(pin, to: rome)
        try await again.close()
        let alone = try #require(try follower.poll())
        #expect(alone.events.map(\.sequence) == [2] && alone.events[0].origin == nil, "one device: its own numbers")

        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        _ = try await laptop.dropPin(at: paris)
        try await laptop.close()
        _ = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        let merged = try #require(try follower.poll())
        #expect(try merged.late == 0 && merged.events == Array(allEvents(inStore: folder.sub("phone"))[2...]), "the laptop's DeviceSeen and drop, after the phone's two")
        #expect(merged.events.allSatisfy { $0.origin?.device != nil })
    }
}
