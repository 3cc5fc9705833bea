import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Forgetting a place on several devices (docs/DEVICES.md, "Forgetting a place on several
/// devices"): the forget reaches every device through syncs, erases every device's events about
/// the place wherever they are held, and a device that had not heard of it cannot bring them back.
@Suite struct DeviceForgetTests {
    let place = ForgetTests()
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)

    /// The needles of ``ForgetTests`` found anywhere in `store`'s files (decompressed too).
    func leftovers(in store: String) throws -> [String] {
        var found: [String] = []
        for file in try ForgetTests.files(under: store) {
            let forms = ForgetTests.searchableForms(of: try Array(Data(contentsOf: URL(fileURLWithPath: file))))
            for (name, needle) in place.needles() where forms.contains(where: { $0.contains(subsequence: needle) }) {
                found.append("\(name) in \(file)")
            }
        }
        return found
    }

    /// A phone with an album at the secret place and a map zoomed in on it, and its clone, the laptop.
    func twoDevices(_ folder: TemporaryFolder, _ clock: TestClock) async throws -> (secret: PinID, kept: PinID) {
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let secret = try await place.album(
            phone, at: place.secretPlace, count: 2, url: ForgetTests.secretURL, title: ForgetTests.secretTitle, bytes: ForgetTests.secretPhoto)
        _ = try await phone.changeRegion(to: MapRegion(center: place.secretPlace, latitudeSpan: 0.5, longitudeSpan: 0.5))
        let kept = try await phone.dropPin(at: paris)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        return (secret, kept)
    }

    @Test func aForgetReachesTheOtherDeviceAndWhatItDidMeanwhileArrivesErased() async throws {
        let folder = TemporaryFolder.made("device-forget")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let (secret, kept) = try await twoDevices(folder, clock)
        #expect(try !leftovers(in: folder.sub("laptop")).isEmpty, "the clone holds the place before the forget")

        // The laptop, not having heard of the forget, moves the pin and zooms in on its new place.
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        try await laptop.dragPin(secret, to: place.secretMove)
        _ = try await laptop.changeRegion(to: MapRegion(center: place.secretMove, latitudeSpan: 0.5, longitudeSpan: 0.5))
        try await laptop.close()
        // The phone forgets the place; it also erases what it holds of the laptop's log.
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let report = try await phone.forget(secret)
        #expect(report.erasedEvents == 6 && report.photosDeleted == 2, "drop, request, listing, two downloads, the region")
        #expect(phone.state.pins.keys.sorted() == [kept])
        try await phone.close()
        #expect(try leftovers(in: folder.sub("phone")).isEmpty)

        let sync = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        #expect(sync.forgetsTaken == [secret] && sync.forgetsGiven.isEmpty && sync.refused.isEmpty)
        #expect(sync.erasedOnArrival == 2, "the laptop's drag and region reached the phone erased")
        #expect(try leftovers(in: folder.sub("phone")).isEmpty)
        // The laptop finishes the forget that arrived when it next opens (vt sync opens it at once).
        #expect(FileManager.default.fileExists(atPath: folder.sub("laptop/forget.arrived")))
        #expect(try await StoreSync.finishForgets(in: folder.sub("laptop"), options: deviceOptions(clock)))
        #expect(try await !StoreSync.finishForgets(in: folder.sub("phone"), options: deviceOptions(clock)))
        #expect(!FileManager.default.fileExists(atPath: folder.sub("laptop/forget.arrived")))
        #expect(try leftovers(in: folder.sub("laptop")) == [])

        var states: [TouristState] = []
        for name in ["phone", "laptop"] {
            let store = try await TouristStore.open(at: folder.sub(name), options: deviceOptions(clock))
            var state = store.state
            state.localDevice = nil
            state.region = nil
            states.append(state)
            try await store.close()
            #expect(try StoreAudit.verify(folder: folder.sub(name), checkPhotoContents: true).isClean, "\(name) verifies")
        }
        #expect(states[0] == states[1] && states[0].pins.keys.sorted() == [kept])
        let again = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        #expect(again.eventsTaken == 0 && again.eventsGiven == 0 && again.erasedOnArrival == 0)
        #expect(try leftovers(in: folder.sub("phone")).isEmpty && leftovers(in: folder.sub("laptop")).isEmpty)
    }

    @Test func aForgetThatArrivedIsFinishedBeforeAnythingElseAndBlocksSyncUntilThen() async throws {
        let folder = TemporaryFolder.made("device-forget-arrived")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let (secret, kept) = try await twoDevices(folder, clock)
        _ = try StoreSync.clone(from: folder.sub("laptop"), to: folder.sub("tablet"), name: "tablet", options: deviceOptions(clock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        try await laptop.forget(secret)
        try await laptop.close()

        // The tablet takes the forget (the laptop is written too: it has nothing to take).
        let sync = try StoreSync.sync(store: folder.sub("tablet"), with: folder.sub("laptop"))
        #expect(sync.forgetsTaken == [secret])
        // As a crash right after would leave it: the payloads are still in the tablet, so it gives
        // nothing to anyone until it has opened once.
        #expect(try !leftovers(in: folder.sub("tablet")).isEmpty)
        #expect { try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("tablet")) } throws: {
            "\($0)".contains("a forget is under way in \(folder.sub("tablet"))")
        }
        #expect { try StoreSync.clone(from: folder.sub("tablet"), to: folder.sub("watch"), name: nil) } throws: {
            "\($0)".contains("a forget is under way")
        }
        let tablet = try await TouristStore.open(at: folder.sub("tablet"), options: deviceOptions(clock))
        #expect(tablet.state.pins.keys.sorted() == [kept])
        try await tablet.close()
        #expect(try leftovers(in: folder.sub("tablet")) == [])

        // The phone never heard of it: a sync with the tablet brings it the forget.
        let phoneSync = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("tablet"))
        #expect(phoneSync.forgetsTaken == [secret] && phoneSync.refused.isEmpty)
        #expect(try await StoreSync.finishForgets(in: folder.sub("phone"), options: deviceOptions(clock)))
        #expect(try leftovers(in: folder.sub("phone")) == [])
    }

    @Test func aForgetPlanNamesEachCopysEventsAndReadsBack() throws {
        let phone = DeviceID.random()
        var plan = ForgetPlan(pin: PinID(0x3fa2_9c01_0000_0001))
        plan.targets = [12: [11], 14: [3]]
        plan.copyTargets = [phone: [3: [11], 4: [5]]]
        plan.photos = [PhotoDigest.of([1, 2, 3])]
        let text = String(decoding: plan.encoded(), as: UTF8.self)
        #expect(text.contains("erase 12 11\nerase 14 3\ncopy \(phone)\nerase 3 11\nerase 4 5\n"))
        #expect(ForgetPlan(plan.encoded()) == plan)
        #expect(ForgetPlan(Array("forget 3fa29c0100000001\ncopy nonsense\n".utf8)) == nil)
        #expect(ForgetPlan(Array("forget 3fa29c0100000001\ncopy \(phone)\ncopy \(phone)\n".utf8)) == nil, "a device named twice")
    }
}

/// The look at an envelope's top-level fields that spares a sync decoding every arriving event.
@Suite struct EventFieldTests {
    @Test func everyEventTypeIsFoundByItsFieldNumberWithoutDecoding() {
        let pin = PinID(0x3fa2_9c01_0000_0001)
        let place = Coordinate(latitude: 12.5, longitude: -65.25)
        let events: [DomainEvent] = [
            .regionChanged(MapRegion(center: place, latitudeSpan: 1, longitudeSpan: 2)),
            .pinDropped(pin, place), .pinDragged(pin, place), .pinRemoved(pin),
            .albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 4, place: place)),
            .albumRequestFailed(pin: pin, collection: 1, reason: "timeout"),
            .collectionReplaced(pin: pin, oldCollection: 1, newCollection: 2),
            .placeForgotten(pin: pin, erasedEvents: 3),
        ]
        for event in events {
            for cause: UInt64? in [nil, 300] {
                let bytes = EventCodec.encode(event, cause: cause)
                let expected = 10 + DomainEvent.schemaTypeNames.firstIndex(of: event.typeName)!
                #expect(EventCodec.eventField(of: bytes[...]) == expected, "\(event.typeName)")
            }
        }
        #expect(EventCodec.eventField(of: [0xFF, 0xFF][...]) == nil)
        #expect(EventCodec.eventField(of: [][...]) == nil)
    }
}
