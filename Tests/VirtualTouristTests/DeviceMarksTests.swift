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

        let reader = try StoreReader.open(at: folder.sub("phone"))
        let events = try allEvents(reader)
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

    @Test func aNewCollectionFromTheLaptopThatWonIsNewsOnThePhoneUntilThePhoneActsAndShowNamesBoth() async throws {
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

        // `vt show` of either New Collection names the other, the rule and the removal kept.
        let reader = try StoreReader.open(at: folder.sub("phone"))
        let merged = try allEvents(reader)
        let replacements = merged.filter { if case .collectionReplaced = $0.event { true } else { false } }
        let (won, lost) = (replacements[0], replacements[1])
        #expect(won.origin?.device != lost.origin?.device && lost.event == ours[0].event)
        let decided = try #require(try reader.decidingEvent(for: lost, verdict: reader.verdict(of: lost)))
        #expect(decided.event == won)
        #expect(decided.how == "this New Collection from laptop came first from collection 1 in the merged order: one collection results, and this one gave way; the photo removed from this pin on any device stays removed")
        let overrode = try #require(try reader.overriddenEvent(for: won, verdict: reader.verdict(of: won)))
        #expect(overrode.event == lost && overrode.how.hasPrefix("this New Collection came first from collection 1 in the merged order, so this one from "))
        #expect(try reader.overriddenEvent(for: lost, verdict: reader.verdict(of: lost)) == nil, "what gave way overrode nothing")
        let lostRequest = try #require(merged.first { $0.event == ours[1].event })
        let request = try #require(try reader.decidingEvent(for: lostRequest, verdict: reader.verdict(of: lostRequest)))
        #expect(request.event.origin?.device == won.origin?.device && request.how.hasPrefix("this request from laptop came first for collection 2"))

        // Once the phone acts on the pin again, it has seen all of it: no news.
        let after = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await after.dragPin(pin, to: rome)
        try await after.close()
        #expect(try StoreReader.open(at: folder.sub("phone")).albumNews(for: pin).isEmpty)
    }
}

extension DeviceMarksTests {
    @Test func aPhotoRemovedOnBothDevicesAtOnceIsDecidedByTheFirstRemoval() async throws {
        let folder = TemporaryFolder.made("removed-twice")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await place.album(phone, at: paris, count: 2, url: "https://photos.example/", title: "Tour", bytes: { fakePhoto(UInt64($0)) })
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        for name in ["laptop", "phone"] {
            let store = try await TouristStore.open(at: folder.sub(name), options: deviceOptions(clock))
            _ = try await store.removePhoto(1, from: pin)
            try await store.close()
        }
        _ = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        let reader = try StoreReader.open(at: folder.sub("phone"))
        let events = try allEvents(reader)
        let removals = events.filter { if case .photoRemoved = $0.event { true } else { false } }
        #expect(removals.count == 2)
        guard case .folded = try reader.verdict(of: removals[1]) else {
            Issue.record("a removal is kept by the photo's identity: the second is folded too")
            return
        }
        let decided = try #require(try reader.decidingEvent(for: removals[1], verdict: reader.verdict(of: removals[1])))
        #expect(decided.event == removals[0] && decided.how.hasPrefix("this removal from laptop had already removed the same photo"), "\(decided.how)")
    }
}
