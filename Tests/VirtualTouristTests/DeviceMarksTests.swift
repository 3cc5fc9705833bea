import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// What the pages mark in a store of several devices (docs/DEVICES.md, "Time travel and audit"):
/// where two devices acted at once (``StoreReader/actedAtOnce(_:)``), and what a merge changed
/// in an album that this device had not seen (``StoreReader/albumNews(for:)``).
@Suite struct DeviceMarksTests {
    let place = ForgetTests()
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)
    let turin = Coordinate(latitude: 45.0703, longitude: 7.6869)

    func history(_ store: String) throws -> (StoreReader, [RecordedEvent]) {
        let reader = try StoreReader.open(at: store)
        var events: [RecordedEvent] = []
        try reader.forEachEvent { events.append($0) }
        return (reader, events)
    }

    @Test func aDragMadeWithoutKnowingOfTheOtherDevicesIsMarkedAsAtOnce() async throws {
        let folder = TemporaryFolder.made("at-once")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: paris)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        try await laptop.dragPin(pin, to: rome)
        try await laptop.close()
        // The phone drags the pin too, not having heard of the laptop's drag.
        let apart = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await apart.dragPin(pin, to: turin)
        try await apart.close()
        _ = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        // Then, having seen it, once more.
        let after = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await after.dragPin(pin, to: paris)
        try await after.close()

        let (reader, events) = try history(folder.sub("phone"))
        let laptopID = try StoreSync.devices(of: folder.sub("laptop")).this.device
        let phoneDrag = try #require(events.first { $0.event == .pinDragged(pin, turin) })
        #expect(events.count == 6, "drop; the laptop's DeviceSeen and drag; the phone's drag; its DeviceSeen and drag")
        #expect(try reader.actedAtOnce(events) == [phoneDrag.sequence: [laptopID]], "only the phone's drag was made apart")
        // A page that starts after the laptop's events knows nothing earlier to compare with.
        #expect(try reader.actedAtOnce(events.filter { $0.sequence >= phoneDrag.sequence }).isEmpty)
        // The devices, this one first.
        #expect(try reader.devices().map(\.label) == [String(try StoreSync.devices(of: folder.sub("phone")).this.device.short), "laptop"])
        #expect(try reader.devices().map(\.events) == [4, 2] && reader.devices().map(\.isThis) == [true, false])
    }

    @Test func aNewCollectionFromTheLaptopThatWonIsNewsOnThePhoneUntilThePhoneActs() async throws {
        let folder = TemporaryFolder.made("album-news")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await place.album(phone, at: paris, count: 3, url: "https://photos.example/", title: "Tour", bytes: { fakePhoto(UInt64($0)) })
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        #expect(try StoreReader.open(at: folder.sub("phone")).albumNews(for: pin).isEmpty, "a store of one device has no news")

        // The laptop removes a photo and asks for a New Collection; the phone, apart, asks too.
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        _ = try await laptop.removePhoto(0, from: pin)
        try await laptop.replaceCollection(of: pin, page: 2, perPage: 30)
        try await laptop.close()
        let apart = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let ours = try await apart.replaceCollection(of: pin, page: 3, perPage: 30)
        try await apart.close()
        _ = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))

        let news = try StoreReader.open(at: folder.sub("phone")).albumNews(for: pin)
        #expect(news.theirs.map(\.event.event.typeName) == ["PhotoRemoved", "CollectionReplaced", "AlbumRequested"])
        #expect(news.theirs.allSatisfy { $0.folded }, "the laptop's New Collection came first in the merged order, and won")
        #expect(news.oursPassedOver.map(\.event) == ours.map(\.event), "the phone's New Collection and its request gave way")
        // On the laptop (the sync went both ways) the phone's New Collection is news too, one the
        // rules passed over; nothing of the laptop's own gave way.
        let there = try StoreReader.open(at: folder.sub("laptop")).albumNews(for: pin)
        #expect(there.theirs.map(\.event.event) == ours.map(\.event) && there.theirs.allSatisfy { !$0.folded })
        #expect(there.oursPassedOver.isEmpty)

        // Once the phone acts on the pin again, it has seen all of it: no news.
        let after = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await after.dragPin(pin, to: rome)
        try await after.close()
        #expect(try StoreReader.open(at: folder.sub("phone")).albumNews(for: pin).isEmpty)
    }
}
