import AlbumPipeline
import DemoPhotoServer
import Foundation
import Testing
import VirtualTourist

/// New Collection shows photos the album has not just shown, never one the user removed, and
/// says "no other photos here" instead of showing the same ones again — at places of 1, 15,
/// 30 and 5,000 photos, over real HTTP to the demo service.
@Suite(.serialized) struct NewCollectionTests {
    /// A catalogue in which the place has exactly `count` photos.
    static func catalogue(_ count: Int) -> DemoCatalogue {
        var catalogue = DemoCatalogue()
        catalogue.setPhotoCount(count, latitude: place.latitude, longitude: place.longitude)
        return catalogue
    }

    static let place = Coordinate(latitude: -41.2865, longitude: 174.7762)

    /// Drops a pin at the place and waits for its first album.
    static func firstAlbum(_ harness: Harness) async throws -> PinID {
        let pin = try await harness.store.dropPin(at: place)
        try await harness.eventually("the first album") { $0.pins[pin]?.album.status == .complete }
        return pin
    }

    static func ids(_ album: Album) -> Set<String> { Set(album.slots.map(\.photo.remoteID)) }

    /// New Collection, then the album once downloaded.
    static func newCollection(_ harness: Harness, _ pin: PinID) async throws -> Album {
        let replaced = try await harness.pipeline.newCollection(for: pin)
        guard case .collectionReplaced(_, _, let collection) = replaced[0].event else {
            Issue.record("New Collection appended \(replaced.map(\.event.typeName))")
            throw Harness.TimedOut()
        }
        let state = try await harness.eventually("collection \(collection)") {
            $0.pins[pin]?.album.collection == collection && $0.pins[pin]?.album.isNewCollectionEnabled == true
        }
        return state.pins[pin]!.album
    }

    @Test(arguments: [1, 15]) func aPlaceWithNoOtherPhotosSaysSoAndChangesNothing(count: Int) async throws {
        try await Harness.with(catalogue: Self.catalogue(count)) { harness in
            let pin = try await Self.firstAlbum(harness)
            var album = harness.store.state.pins[pin]!.album
            #expect(album.slots.count == count)
            #expect(!album.hasOtherPhotos)
            if count > 1 {
                try await harness.store.removePhoto(album.slots[2].number, from: pin)
                album = harness.store.state.pins[pin]!.album
            }
            let sequence = harness.store.lastSequence
            await #expect {
                try await harness.pipeline.newCollection(for: pin)
            } throws: { error in
                guard let error = error as? DomainError, error.code == .noOtherPhotos else { return false }
                return error.message.contains("no other photos here")
            }
            #expect(harness.store.lastSequence == sequence, "a refused New Collection appends nothing")
            #expect(harness.store.state.pins[pin]!.album == album)
        }
    }

    @Test func twoPagesAlternateAndARemovedPhotoNeverComesBack() async throws {
        try await Harness.with(catalogue: Self.catalogue(30)) { harness in
            let pin = try await Self.firstAlbum(harness)
            let first = harness.store.state.pins[pin]!.album
            #expect(first.slots.count == 21 && first.hasOtherPhotos)
            let removed = first.slots[4].photo.remoteID
            try await harness.store.removePhoto(first.slots[4].number, from: pin)

            // The other page: its 9 photos, none of the 21 just shown.
            let second = try await Self.newCollection(harness, pin)
            #expect(second.slots.count == 9)
            #expect(Self.ids(second).isDisjoint(with: Self.ids(first)))

            // The store closes and opens again: what was removed is known from the log.
            try await harness.closeStore()
            try await harness.open()

            // Back to the first page, less the photo the user removed, and none of the 9.
            let third = try await Self.newCollection(harness, pin)
            #expect(!Self.ids(third).contains(removed))
            #expect(Self.ids(third) == Self.ids(first).subtracting([removed]))
            #expect(Self.ids(third).isDisjoint(with: Self.ids(second)))
        }
    }

    @Test func aPlaceOfThousandsSharesNothingWithTheLastSet() async throws {
        try await Harness.with(catalogue: Self.catalogue(5_000)) { harness in
            let pin = try await Self.firstAlbum(harness)
            var last = harness.store.state.pins[pin]!.album
            var removed: Set<String> = []
            for round in 0..<4 {
                // The user removes two photos of each set.
                for slot in last.slots.prefix(2) {
                    removed.insert(slot.photo.remoteID)
                    try await harness.store.removePhoto(slot.number, from: pin)
                }
                let next = try await Self.newCollection(harness, pin)
                // The page the service gave, less what was removed (a page seen rounds ago may
                // come round again) and less the last set.
                let served = Self.catalogue(5_000).photos(
                    latitude: Self.place.latitude, longitude: Self.place.longitude, page: Int(next.request!.page), perPage: 21)
                #expect(Self.ids(next) == Set(served.map(\.id)).subtracting(removed).subtracting(Self.ids(last)), "round \(round)")
                #expect(next.slots.count >= 15, "round \(round)")
                #expect(Self.ids(next).isDisjoint(with: Self.ids(last)), "round \(round)")
                #expect(Self.ids(next).isDisjoint(with: removed), "round \(round)")
                // Within the 4,000 results a search serves.
                #expect((1...(4_000 / 21)).contains(Int(next.request!.page)))
                last = next
            }
        }
    }
}
