import DeviceLogs
import EventLog
import Explanations
import Foundation
import SeededRandom
import StorageTestSupport
import Testing
import TouristWorkload
@testable import VirtualTourist

/// `vt why` (docs/WHY.md): the events behind each fact, checked against a replay of the whole
/// history (``WhyChecker``) on hand-made histories, a forgotten place, two devices that merge, and
/// the benchmark workload; and the answers' words where a person reads them.
@Suite(.heavy) struct WhyTests {
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)
    let oslo = Coordinate(latitude: 59.9139, longitude: 10.7522)

    @Test func eachAnswerNamesTheEventThatSetTheFactAtEveryPoint() async throws {
        let folder = TemporaryFolder("why")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        let helper = ForgetTests()
        try await store.changeRegion(to: MapRegion(center: paris, latitudeSpan: 20, longitudeSpan: 30))
        // An album of 3 photos, all the service has: New Collection has nothing else to show.
        let full = try await helper.album(store, at: paris, count: 3, url: "https://a.example/", title: "A", bytes: { fakePhoto(UInt64($0)) })
        try await store.removePhoto(1, from: full)
        let moved = try await store.dropPin(at: rome)
        _ = try await store.dragPin(moved, to: oslo)
        let asked = try await store.requestAlbum(for: moved, perPage: 2, cause: nil)
        try await store.recordRequestFailure(pin: moved, collection: 1, reason: "the service is down", cause: asked.sequence)
        let forgotten = try await store.dropPin(at: Coordinate(latitude: 12.3456789, longitude: -65.4321987))
        try await store.changeRegion(to: MapRegion(center: rome, latitudeSpan: 1, longitudeSpan: 1))
        let removed = try await store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
        _ = try await store.removePin(removed)
        try await store.forget(forgotten)
        let last = store.lastSequence
        try await store.close()

        let reader = try StoreReader.open(at: folder.path)
        var checker = WhyChecker(reader)
        try checker.check(at: Set(1...last))
        #expect(checker.answers > 100)

        // What a person reads.
        let explainer = Explainer(reader: reader)
        let place = try explainer.answer(.pin(moved))
        #expect(place.fact == "pin \(moved) is at \(oslo)")
        #expect(place.because.map(\.event.event.typeName) == ["PinDragged", "PinDropped"] && place.because[0].says.contains("moved the pin to"))
        let then = try explainer.answer(.pin(moved), at: place.because[1].event.sequence)
        #expect(then.fact == "pin \(moved) is at \(rome)" && then.because.count == 1)
        let failed = try explainer.answer(.album(moved))
        #expect(failed.fact.contains("failed: the service is down") && failed.because.first?.event.event.typeName == "AlbumRequestFailed")
        #expect(failed.because.contains { $0.event == asked }, "the request it answered")
        let button = try explainer.answer(.newCollection(full))
        #expect(button.fact.contains("disabled") && button.fact.contains("no other photos"))
        #expect(button.because.contains { $0.event.event.typeName == "PhotosListed" })
        let photo = try explainer.answer(.photo(full, slot: 1))
        #expect(photo.fact.contains("has no photo 1") && photo.because.first?.event.event.typeName == "PhotoRemoved")
        #expect(photo.because.first?.says.contains("never comes back") == true)
        let kept = try explainer.answer(.photo(full, slot: 2))
        #expect(kept.fact.contains("is downloaded") && kept.because.map(\.event.event.typeName) == ["PhotoDownloaded", "PhotosListed"])
        let gone = try explainer.answer(.pin(forgotten))
        #expect(gone.fact.contains("not on the map") && gone.because.map(\.event.event.typeName) == ["PlaceForgotten"])
        #expect(try explainer.answer(.pin(removed)).because.first?.event.event.typeName == "PinRemoved")
        let region = try explainer.answer(.region)
        #expect(region.because.count == 1 && region.fact.contains("41.8902"))
        #expect(try explainer.answer(.region, at: 1).fact.contains("48.8584"))
        #expect(try explainer.answer(.pin(moved), at: 2).fact.contains("not on the map yet"))

        // What is not there is refused, naming it.
        #expect(throws: DomainError.self) { try explainer.answer(.pin(PinID(999))) }
        #expect(throws: DomainError.self) { try explainer.answer(.pin(moved), at: last + 1) }
    }

    @Test func onTwoDevicesTheAnswersFollowTheMergedOrderAndNameTheDevice() async throws {
        let folder = TemporaryFolder.made("why-devices")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: paris)
        let other = try await phone.dropPin(at: rome)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        _ = try StoreSync.rename(store: folder.sub("phone"), to: "phone")
        // Concurrent: a drag on each (the laptop's is later), a removal on the phone of the pin
        // the laptop moves.
        let onPhone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        _ = try await onPhone.dragPin(pin, to: rome)
        _ = try await onPhone.removePin(other)
        _ = try await onPhone.changeRegion(to: MapRegion(center: rome, latitudeSpan: 2, longitudeSpan: 2))
        try await onPhone.close()
        // The laptop's map moves later in the merged order; each device still opens where it was.
        let onLaptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        _ = try await onLaptop.dragPin(pin, to: oslo)
        _ = try await onLaptop.dragPin(other, to: oslo)
        _ = try await onLaptop.changeRegion(to: MapRegion(center: oslo, latitudeSpan: 3, longitudeSpan: 3))
        try await onLaptop.close()
        _ = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))

        for device in ["laptop", "phone"] {
            let reader = try StoreReader.open(at: folder.sub(device))
            var checker = WhyChecker(reader)
            try checker.check(at: Set(1...reader.lastSequence))
            let names = try Self.names(folder.sub(device))
            let place = try Explainer(reader: reader, names: names).answer(.pin(pin))
            #expect(place.fact == "pin \(pin) is at \(oslo)", "\(device)")
            #expect(place.because.first?.device == "laptop" && place.because.first?.says.contains("later in the merged order wins") == true)
            #expect(place.because.dropFirst().first?.device == "phone" && place.because.dropFirst().first?.says.contains("replaced") == true)
            let removal = try Explainer(reader: reader, names: names).answer(.pin(other))
            #expect(removal.fact.contains("not on the map") && removal.because.first?.device == "phone", "\(device): \(removal)")
            let region = try Explainer(reader: reader, names: names).answer(.region)
            #expect(region.fact.contains(device == "phone" ? "\(rome)" : "\(oslo)") && region.because.first?.device == device, "\(device): \(region)")
        }
    }

    static func names(_ store: String) throws -> [DeviceID: String] {
        let devices = try StoreSync.devices(of: store)
        var names = [devices.this.device: devices.this.name ?? "?"]
        for copy in devices.copies { names[copy.id] = copy.file?.name ?? "?" }
        return names
    }

    @Test func theBenchmarkWorkloadsAnswersAgreeWithItsReplay() async throws {
        let folder = TemporaryFolder("why-workload")
        var configuration = LogConfiguration()
        configuration.payloadCodec = EventCodec.blockCodec
        configuration.durability = .none
        configuration.compactsInBackground = false
        let log = try EventLog.open(at: folder.path + "/log", configuration: configuration)
        var workload = Workload(seed: 2026, livePins: 20)
        try workload.produce(atLeast: 6_000) { commit in _ = try log.append(contentsOf: commit.map { EventCodec.encode($0, cause: nil) }) }
        _ = try log.compact()
        try log.close()
        let reader = try StoreReader.open(at: folder.path)
        var random = SplitMix(seed: 51)
        var points: Set<UInt64> = [reader.lastSequence, 1]
        while points.count < 4 { points.insert(1 + random.next() % reader.lastSequence) }
        var checker = WhyChecker(reader)
        try checker.check(at: points, photos: false)
        #expect(checker.answers > 60)
    }
}
