import EventLog
import StorageTestSupport
import Testing
@testable import VirtualTourist

@Suite(.heavy) struct FoldTests {
    let t = LogTimestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    func recorded(_ events: [(DomainEvent, UInt64?)]) -> [RecordedEvent] {
        events.enumerated().map { RecordedEvent(sequence: UInt64($0.offset + 1), timestamp: t, cause: $0.element.1, event: $0.element.0) }
    }

    /// A whole album's life, asserted as whole states built by hand.
    @Test func anAlbumsLifeFoldsToExactlyTheExpectedStates() {
        let pin = PinID(7)
        let request = AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 3, place: paris)
        let listing = PhotoListing(pin: pin, collection: 1, page: 1, pages: 4, total: 12, photos: listedPhotos(3))
        let events = recorded([
            (.regionChanged(MapRegion(center: paris, latitudeSpan: 2, longitudeSpan: 3)), nil),
            (.pinDropped(pin, paris), nil),
            (.albumRequested(request), 2),
            (.photosListed(listing), 3),
            (.photoDownloaded(DownloadedPhoto(pin: pin, collection: 1, slot: 2, digest: digest(1), byteCount: 9, mediaType: "image/png")), 4),
            (.photoDownloadFailed(pin: pin, collection: 1, slot: 0, reason: "HTTP 404"), 4),
        ])

        var downloading = TouristState()
        downloading.sequence = 6
        downloading.region = MapRegion(center: paris, latitudeSpan: 2, longitudeSpan: 3)
        var album = Album()
        album.phase = .listed
        album.request = request
        album.requestedAt = 3
        album.listedAt = 4
        album.pages = 4
        album.total = 12
        album.listedPhotoCount = 3
        let photos = listedPhotos(3)
        album.slots = [
            PhotoSlot(number: 0, photo: photos[0], state: .failed(reason: "HTTP 404"), resolvedAt: 6),
            PhotoSlot(number: 1, photo: photos[1], state: .placeholder, resolvedAt: nil),
            PhotoSlot(number: 2, photo: photos[2], state: .downloaded(digest: digest(1), byteCount: 9, mediaType: "image/png"), resolvedAt: 5),
        ]
        downloading.pins[pin] = Pin(id: pin, coordinate: paris, droppedAt: 2, album: album)
        downloading.photoReferences = [digest(1): 1]
        #expect(fold(events) == downloading)
        #expect(downloading.pins[pin]!.album.status == .downloading(done: 2, of: 3))
        #expect(downloading.pins[pin]!.album.slotCounts == (resolved: 2, downloaded: 1), "one failed, one downloaded, one waiting")
        #expect(!downloading.pins[pin]!.album.isNewCollectionEnabled)

        // The last photo arrives; removing the first flows the rest up.
        var more = events
        more.append(RecordedEvent(sequence: 7, timestamp: t, cause: 4, event: .photoDownloaded(DownloadedPhoto(pin: pin, collection: 1, slot: 1, digest: digest(2), byteCount: 5, mediaType: "image/jpeg"))))
        more.append(RecordedEvent(sequence: 8, timestamp: t, cause: nil, event: .photoRemoved(pin: pin, collection: 1, slot: 0)))
        let complete = fold(more)
        var expected = downloading
        expected.sequence = 8
        expected.pins[pin]!.album.slots = [
            PhotoSlot(number: 1, photo: photos[1], state: .downloaded(digest: digest(2), byteCount: 5, mediaType: "image/jpeg"), resolvedAt: 7),
            album.slots[2],
        ]
        expected.photoReferences = [digest(1): 1, digest(2): 1]
        expected.pins[pin]!.removedPhotos = [photos[0].identity.key]  // kept out of later collections
        #expect(complete == expected)
        #expect(complete.pins[pin]!.album.status == .complete)
        #expect(complete.pins[pin]!.album.slotCounts == (resolved: 2, downloaded: 2))
        #expect(complete.pins[pin]!.album.isNewCollectionEnabled)

        // New Collection empties the album into collection 2; its photos are no longer roots.
        more.append(RecordedEvent(sequence: 9, timestamp: t, cause: nil, event: .collectionReplaced(pin: pin, oldCollection: 1, newCollection: 2)))
        let replaced = fold(more)
        expected.sequence = 9
        expected.pins[pin]!.album = Album(collection: 2)
        expected.photoReferences = [:]
        #expect(replaced == expected)
        #expect(replaced.referencedDigests.isEmpty)
    }

    @Test func noPhotosMeansNoImagesAndNewCollectionIsEnabled() {
        let pin = PinID(1)
        let state = fold(recorded([
            (.pinDropped(pin, rome), nil),
            (.albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 30, place: rome)), 1),
            (.photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 0, total: 0, photos: [])), 2),
        ]))
        #expect(state.pins[pin]!.album.status == .noImages)
        #expect(state.pins[pin]!.album.isNewCollectionEnabled)
    }

    /// The drag rule: a pin moves; its album, if requested, moves to a new collection.
    @Test func draggingAPinMovesItsAlbumToANewCollection() {
        let pin = PinID(1)
        let listed = recorded([
            (.pinDropped(pin, rome), nil),
            (.albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 30, place: rome)), 1),
            (.photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 2, photos: listedPhotos(2))), 2),
            (.photoDownloaded(DownloadedPhoto(pin: pin, collection: 1, slot: 0, digest: digest(3), byteCount: 1, mediaType: "image/gif")), 3),
            (.pinDragged(pin, paris), nil),
        ])
        let state = fold(listed)
        #expect(state.pins[pin]!.coordinate == paris)
        #expect(state.pins[pin]!.album == Album(collection: 2))
        #expect(state.photoReferences.isEmpty)
        // A pin whose album was never requested just moves.
        let quiet = fold(recorded([(.pinDropped(pin, rome), nil), (.pinDragged(pin, paris), nil)]))
        #expect(quiet.pins[pin]!.album == Album(collection: 1))
    }

    @Test func removingAPinReleasesItsPhotosButSharedImagesStayReferenced() {
        let a = PinID(1), b = PinID(2)
        var steps: [(DomainEvent, UInt64?)] = []
        for pin in [a, b] {
            steps += [
                (.pinDropped(pin, rome), nil),
                (.albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 30, place: rome)), nil),
                (.photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 1, photos: listedPhotos(1))), nil),
                (.photoDownloaded(DownloadedPhoto(pin: pin, collection: 1, slot: 0, digest: digest(9), byteCount: 1, mediaType: "image/jpeg")), nil),
            ]
        }
        steps.append((.pinRemoved(a), nil))
        let state = fold(recorded(steps))
        #expect(state.pins[a] == nil)
        #expect(state.photoReferences == [digest(9): 1], "pin b still shows the same image")
    }

    /// Events that break the rules (possible only in a foreign or imported log) are skipped
    /// and counted, never applied.
    @Test func eventsThatBreakTheRulesAreSkippedAndCounted() {
        let pin = PinID(1)
        let state = fold(recorded([
            (.pinDropped(pin, rome), nil),
            (.photoRemoved(pin: pin, collection: 1, slot: 3), nil),
            (.pinDragged(PinID(99), paris), nil),
            (.pinDropped(pin, paris), nil),
        ]))
        #expect(state.ignoredEvents == 3)
        #expect(state.sequence == 4)
        #expect(state.pins[pin]!.coordinate == rome)
    }

    /// Found by fuzzing (Fuzz/Regressions/FuzzSnapshot/collection-max-then-drag): a snapshot
    /// can hold an album on the last collection number. Moving its pin, or New Collection,
    /// needs a next number: both are refused, where the fold used to trap on the overflow.
    @Test func anAlbumOnTheLastCollectionNumberStartsNoOther() {
        let pin = PinID(1), still = PinID(2)
        var state = fold(recorded([
            (.pinDropped(pin, rome), nil),
            (.albumRequested(AlbumRequest(pin: pin, collection: 1, page: 1, perPage: 3, place: rome)), 1),
            (.photosListed(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 0, photos: [])), 2),
            (.pinDropped(still, rome), nil),
        ]))
        state.pins[pin]!.album.collection = .max
        let before = state
        for event in [
            DomainEvent.pinDragged(pin, paris),
            .collectionReplaced(pin: pin, oldCollection: .max, newCollection: 0),
        ] {
            let problem = state.problem(with: event)
            #expect(problem?.code == .wrongAlbumState)
            #expect(problem?.message.contains("collection 4294967295, the last number there is") == true)
            state.apply(RecordedEvent(sequence: state.sequence + 1, timestamp: t, cause: nil, event: event))
        }
        #expect(state.ignoredEvents == before.ignoredEvents + 2)
        #expect(state.pins == before.pins)
        // A pin whose album was never requested needs no collection number to move.
        #expect(state.problem(with: .pinDragged(still, paris)) == nil)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func generatedStoriesNeverBreakTheRules(_ seed: UInt64) {
        var story = StoryGenerator(seed: seed)
        story.generate(2_000)
        let state = fold(story.events)
        #expect(state == story.state)
        #expect(state.ignoredEvents == 0)
        // The references always equal a count over the albums.
        var counted: PhotoReferences = [:]
        for pin in state.pins.values { for slot in pin.album.slots { if let d = slot.digest { counted[d, default: 0] += 1 } } }
        #expect(state.photoReferences == counted)
        let types = Set(story.events.map(\.event.typeName))
        #expect(types == Set(DomainEvent.schemaTypeNames), "the generator covers every event type that can be appended")
    }
}
