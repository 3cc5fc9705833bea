import DeviceLogs
import EventLog
import Testing
@testable import VirtualTourist

/// The rules by intent (docs/DEVICES.md), at the fold: two devices' events in the merged order,
/// by (time, device, sequence). Each concurrent pair is folded with either device's event
/// first; both give the state the rule names.
@Suite struct MergeRuleTests {
    static let phone = DeviceID(parsing: "11111111111111111111111111111111")!
    static let laptop = DeviceID(parsing: "22222222222222222222222222222222")!
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)
    let oslo = Coordinate(latitude: 59.9139, longitude: 10.7522)
    let pin = PinID(7)

    /// An event of `device` at `time` (microseconds).
    struct Step {
        var device: DeviceID
        var time: Int64
        var event: DomainEvent
    }

    /// Folds the steps in the merged order as `local` sees them; each device's events are
    /// numbered in its log in the order given.
    static func fold(_ steps: [Step], local: DeviceID = phone) -> TouristState {
        var counts: [DeviceID: UInt64] = [:]
        let numbered = steps.map { step -> (Step, UInt64) in
            counts[step.device, default: 0] += 1
            return (step, counts[step.device]!)
        }
        let merged = numbered.sorted { a, b in
            (a.0.time, a.0.device, a.1) < (b.0.time, b.0.device, b.1)
        }
        var state = TouristState(localDevice: local)
        for (position, (step, sequence)) in merged.enumerated() {
            state.apply(
                RecordedEvent(
                    sequence: UInt64(position + 1), timestamp: LogTimestamp(microsecondsSinceEpoch: step.time), cause: nil,
                    event: step.event, origin: EventOrigin(device: step.device, sequence: sequence)))
        }
        return state
    }

    /// A pin dropped on the phone whose first album the phone listed and downloaded.
    func history(photos: [ListedPhoto]) -> [Step] {
        let request = AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 10, place: paris)
        var steps = [
            Step(device: Self.phone, time: 10, event: .pinDropped(pin, paris)),
            Step(device: Self.phone, time: 11, event: .albumRequested(request)),
            Step(device: Self.phone, time: 12, event: .photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 5, total: 50, photos: photos))),
        ]
        for slot in photos.indices {
            steps.append(Step(device: Self.phone, time: 13, event: .photoDownloaded(download(slot: slot, collection: 1, seed: UInt64(slot)))))
        }
        return steps
    }

    func download(slot: Int, collection: UInt32, seed: UInt64) -> DownloadedPhoto {
        DownloadedPhoto(pin: pin, collection: collection, slot: UInt32(slot), digest: digest(seed), byteCount: 10, mediaType: "image/jpeg")
    }

    /// New Collection on `device` at `time`: the replacement, the request, a listing and its downloads.
    func newCollection(on device: DeviceID, at time: Int64, photos: [ListedPhoto], seeds: UInt64, downloadsAt: Int64? = nil) -> [Step] {
        let request = AlbumRequest(pin: pin, collection: 2, page: 2, perPage: 10, place: paris)
        var steps = [
            Step(device: device, time: time, event: .collectionReplaced(pin: pin, oldCollection: 1, newCollection: 2)),
            Step(device: device, time: time, event: .albumRequested(request)),
            Step(device: device, time: time + 1, event: .photosListed(PhotoListing(pin: pin, collection: 2, page: 2, pages: 5, total: 50, photos: photos))),
        ]
        for slot in photos.indices {
            steps.append(Step(device: device, time: downloadsAt ?? time + 2, event: .photoDownloaded(download(slot: slot, collection: 2, seed: seeds + UInt64(slot)))))
        }
        return steps
    }

    @Test(arguments: [false, true])
    func twoDragsTheLaterInTheMergedOrderWins(phoneFirst: Bool) {
        let steps = [Step(device: Self.phone, time: 10, event: .pinDropped(pin, paris))] + [
            Step(device: Self.phone, time: phoneFirst ? 20 : 30, event: .pinDragged(pin, rome)),
            Step(device: Self.laptop, time: phoneFirst ? 30 : 20, event: .pinDragged(pin, oslo)),
        ]
        let state = Self.fold(steps)
        #expect(state.pins[pin]?.coordinate == (phoneFirst ? oslo : rome))
        #expect(state.ignoredEvents == 0, "the earlier drag stays in history; it was applied, then overtaken")
    }

    @Test(arguments: [false, true])
    func aRemovalWinsOverAConcurrentDragOrAlbumRequest(removalFirst: Bool) {
        let steps = [
            Step(device: Self.phone, time: 10, event: .pinDropped(pin, paris)),
            Step(device: Self.phone, time: removalFirst ? 20 : 40, event: .pinRemoved(pin)),
            Step(device: Self.laptop, time: 30, event: .pinDragged(pin, rome)),
            Step(device: Self.laptop, time: 31, event: .albumRequested(AlbumRequest(pin: pin, collection: 2, page: 1, perPage: 10, place: rome))),
            Step(device: Self.laptop, time: 32, event: .photosListed(PhotoListing(pin: pin, collection: 2, page: 1, pages: 1, total: 2, photos: listedPhotos(2)))),
        ]
        let state = Self.fold(steps)
        #expect(state.pins[pin] == nil)
        #expect(state.photoReferences.isEmpty)
    }

    @Test(arguments: [false, true])
    func aRemovedPhotoNeverComesBackThroughAConcurrentNewCollection(removalFirst: Bool) {
        let first = listedPhotos(3, prefix: "a")
        // The laptop's new collection lists a1 again (the same photo of the same service).
        let second = [listedPhotos(1, prefix: "b")[0], first[1], listedPhotos(2, prefix: "c")[1]]
        let removal = Step(
            device: Self.phone, time: removalFirst ? 50 : 70,
            event: .photoRemoved(pin: pin, collection: 1, slot: 1, photo: first[1].identity))
        let steps = history(photos: first) + [removal] + newCollection(on: Self.laptop, at: 60, photos: second, seeds: 100)
        let state = Self.fold(steps)
        let album = state.pins[pin]!.album
        #expect(album.collection == 2)
        #expect(!album.slots.contains { $0.photo.identity == first[1].identity }, "a1 was removed on the phone")
        #expect(album.slots.map(\.photo.remoteID) == ["b0", "c1"])
        #expect(state.pins[pin]!.removedPhotos == [first[1].identity.key])
        #expect(!state.photoReferences.keys.contains(digest(101)), "a1's copy in the new collection is released")
    }

    @Test(arguments: [false, true])
    func newCollectionOnTwoDevicesMakesOneCollectionAndKeepsBothRemovals(phoneFirst: Bool) {
        let first = listedPhotos(4, prefix: "a")
        let phoneList = listedPhotos(3, prefix: "p")
        let laptopList = listedPhotos(3, prefix: "l")
        let steps = history(photos: first) + [
            Step(device: Self.phone, time: 40, event: .photoRemoved(pin: pin, collection: 1, slot: 0, photo: first[0].identity)),
            Step(device: Self.laptop, time: 41, event: .photoRemoved(pin: pin, collection: 1, slot: 3, photo: first[3].identity)),
        ]  // The winner's downloads come last: the loser's, for its own listing, must not fill the winner's slots.
            + newCollection(on: Self.phone, at: phoneFirst ? 50 : 60, photos: phoneList, seeds: 200, downloadsAt: 90)
            + newCollection(on: Self.laptop, at: phoneFirst ? 60 : 50, photos: laptopList, seeds: 300, downloadsAt: 90)
        let state = Self.fold(steps)
        let album = state.pins[pin]!.album
        let winner = phoneFirst ? Self.phone : Self.laptop
        #expect(album.collection == 2 && album.requestedBy == winner)
        #expect(album.slots.map(\.photo.remoteID) == (phoneFirst ? ["p0", "p1", "p2"] : ["l0", "l1", "l2"]))
        #expect(album.status == .complete)
        // The loser's downloads are not referenced: its photos go to garbage collection.
        let loserSeeds: ClosedRange<UInt64> = phoneFirst ? 300...302 : 200...202
        #expect(loserSeeds.allSatisfy { !state.photoReferences.keys.contains(digest($0)) })
        #expect(state.pins[pin]!.removedPhotos == [first[0].identity.key, first[3].identity.key])
    }

    @Test(arguments: [false, true])
    func anAlbumAskedForOnTwoDevicesIsOneAlbumWithNoPhotoTwice(phoneFirst: Bool) {
        let request = AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 10, place: paris)
        let photos = listedPhotos(3)
        func ask(_ device: DeviceID, _ time: Int64, seeds: UInt64) -> [Step] {
            [
                Step(device: device, time: time, event: .albumRequested(request)),
                Step(device: device, time: time + 5, event: .photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 3, photos: photos))),
            ] + photos.indices.map { Step(device: device, time: time + 6, event: .photoDownloaded(download(slot: $0, collection: 1, seed: seeds + UInt64($0)))) }
        }
        let steps = [Step(device: Self.phone, time: 10, event: .pinDropped(pin, paris))]
            + ask(Self.phone, phoneFirst ? 20 : 21, seeds: 10) + ask(Self.laptop, phoneFirst ? 21 : 20, seeds: 10)
        let state = Self.fold(steps)
        let album = state.pins[pin]!.album
        #expect(album.requestedBy == (phoneFirst ? Self.phone : Self.laptop))
        #expect(album.slots.map(\.photo.remoteID) == ["p0", "p1", "p2"])
        #expect(album.status == .complete)
        #expect(state.photoReferences.keys.allSatisfy { state.photoReferences[$0] == 1 } && state.photoReferences.count == 3, "no photo twice")
    }

    @Test func theMapRegionIsEachDevicesOwn() {
        let phoneView = MapRegion(center: paris, latitudeSpan: 2, longitudeSpan: 3)
        let laptopView = MapRegion(center: rome, latitudeSpan: 20, longitudeSpan: 30)
        let steps = [
            Step(device: Self.phone, time: 10, event: .regionChanged(phoneView)),
            Step(device: Self.laptop, time: 20, event: .regionChanged(laptopView)),
        ]
        #expect(Self.fold(steps, local: Self.phone).region == phoneView)
        #expect(Self.fold(steps, local: Self.laptop).region == laptopView)
        #expect(Self.fold(steps, local: Self.phone).ignoredEvents == 0, "another device's view is not a broken rule")
    }

    @Test(arguments: [false, true])
    func aForgottenPlaceWinsOverConcurrentActions(forgetFirst: Bool) {
        let steps = history(photos: listedPhotos(2)) + [
            Step(device: Self.phone, time: forgetFirst ? 30 : 50, event: .placeForgotten(pin: pin, erasedEvents: 5)),
            Step(device: Self.laptop, time: 40, event: .pinDragged(pin, rome)),
            Step(device: Self.laptop, time: 41, event: .albumRequested(AlbumRequest(pin: pin, collection: 2, page: 1, perPage: 10, place: rome))),
        ]
        let state = Self.fold(steps)
        #expect(state.pins[pin] == nil && state.photoReferences.isEmpty)
    }

    @Test func aResultFromAnotherDeviceThanTheRequestsIsNotFolded() {
        let request = AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 10, place: paris)
        let steps = [
            Step(device: Self.phone, time: 10, event: .pinDropped(pin, paris)),
            Step(device: Self.phone, time: 11, event: .albumRequested(request)),
            Step(device: Self.laptop, time: 12, event: .photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 2, photos: listedPhotos(2)))),
        ]
        let state = Self.fold(steps)
        #expect(state.pins[pin]?.album.phase == .listing && state.ignoredEvents == 1)
        let problem = state.problem(
            with: .albumRequestFailed(pin: pin, collection: 1, reason: "timeout"), by: Self.laptop)
        #expect(problem?.message.contains("asked for on device \(Self.phone.short)") == true)
        #expect(state.problem(with: .albumRequestFailed(pin: pin, collection: 1, reason: "timeout"), by: Self.phone) == nil)
    }

    /// The laptop asked for the album and has not answered (it is offline); the phone, having
    /// seen the request, asks for a New Collection instead of waiting. The laptop's listing,
    /// landing before or after the phone's New Collection in the merged order, is stale once the
    /// collection moved on: both orders give the phone's collection.
    @Test(arguments: [false, true])
    func aNewCollectionTakesOverAnAlbumThatAwaitsAnotherDevice(laptopListsFirst: Bool) {
        let request = AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 10, place: paris)
        let asked = [
            Step(device: Self.phone, time: 10, event: .pinDropped(pin, paris)),
            Step(device: Self.laptop, time: 11, event: .albumRequested(request)),
        ]
        let waiting = Self.fold(asked)
        #expect(waiting.pins[pin]?.album.awaitsAnotherDevice(than: Self.phone) == true)
        #expect(waiting.pins[pin]?.album.awaitsAnotherDevice(than: Self.laptop) == false)
        #expect(waiting.pins[pin]?.album.awaitsAnotherDevice(than: nil) == false, "a store of one device has no other device")
        let replace = DomainEvent.collectionReplaced(pin: pin, oldCollection: 1, newCollection: 2)
        #expect(waiting.problem(with: replace, by: Self.phone) == nil, "the phone may take it over")
        #expect(waiting.problem(with: replace, by: Self.laptop)?.code == .albumBusy, "the laptop waits for its own request")
        #expect(waiting.problem(with: replace)?.code == .albumBusy)

        let laptopListing = Step(
            device: Self.laptop, time: laptopListsFirst ? 15 : 30,
            event: .photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 2, photos: listedPhotos(2, prefix: "l"))))
        let state = Self.fold(asked + [laptopListing] + newCollection(on: Self.phone, at: 20, photos: listedPhotos(3), seeds: 50))
        let album = state.pins[pin]?.album
        #expect(album?.collection == 2 && album?.requestedBy == Self.phone && album?.slots.count == 3)
        #expect(album?.slots.allSatisfy { $0.photo.remoteID.hasPrefix("p") } == true, "none of the laptop's stale listing")
        #expect(state == Self.fold(asked + newCollection(on: Self.phone, at: 20, photos: listedPhotos(3), seeds: 50) + [laptopListing]))
    }
}

