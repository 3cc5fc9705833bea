import AlbumPipeline
import DemoPhotoServer
import Foundation
import PhotoServiceDoubles
import PhotoSources
import Testing
import VirtualTourist

/// New Collection past the geosearch's 500 hits, end to end: the pipeline, the store and the
/// Commons double, at a place of 1,500 files (1,050 photos; the geosearch names 350 of them).
@Suite(.serialized, .timeLimit(.minutes(10))) struct CommonsWiderAlbumTests {
    static let place = Coordinate(latitude: 47.3769, longitude: 8.5417)

    static var catalogue: DemoCatalogue {
        var catalogue = DemoCatalogue()
        catalogue.setPhotoCount(1_500, latitude: place.latitude, longitude: place.longitude)
        return catalogue
    }

    /// 120 photos an album: the third collection crosses from the geosearch's 350 into the
    /// wider search, the fourth is the wider search's alone.
    static var options: PipelineOptions {
        var options = Harness.defaultOptions
        options.perPage = 120
        return options
    }

    static func collection(_ albums: CommonsAlbums, _ pin: PinID, _ number: Int) async throws -> Album {
        let state = try await albums.eventually("collection \(number)") {
            $0.pins[pin]?.album.collection == UInt32(number) && $0.pins[pin]?.album.status == .complete
        }
        return state.pins[pin]!.album
    }

    @Test func newCollectionsPastTheGeosearchShowPhotosNotShownBefore() async throws {
        try await CommonsAlbums.with(catalogue: Self.catalogue, options: Self.options) { albums in
            let pin = try await albums.store.dropPin(at: Self.place)
            var seen = Set<String>()
            for round in 1...4 {
                let album = try await Self.collection(albums, pin, round)
                let ids = album.slots.map(\.photo.remoteID)
                #expect(ids.count == 120, "collection \(round)")
                #expect(seen.isDisjoint(with: ids), "collection \(round) repeats photos")
                #expect(album.slots.allSatisfy { $0.digest != nil && !$0.photo.creator.isEmpty })
                // The whole listing, geosearch and wider search, is what the album counts on.
                #expect(album.total == 1_050 && album.pages == 9 && album.hasOtherPhotos, "collection \(round)")
                seen.formUnion(ids)
                if round < 4 { try await albums.pipeline.newCollection(for: pin) }
            }
            let searches = albums.double.controls.records.filter { $0.kind == "search" }
            #expect(searches.contains { $0.query["srlimit"] == "500" && $0.query["srsearch"]?.hasPrefix("nearcoord:10km,") == true })
            // The listing events say the same as the state.
            let listings = try albums.store.events().compactMap { recorded -> PhotoListing? in
                if case .photosListed(let listing) = recorded.event { return listing }
                return nil
            }
            #expect(listings.map(\.page) == [1, 2, 3, 4] && listings.allSatisfy { $0.total == 1_050 && $0.pages == 9 })
        }
    }

    @Test(arguments: [
        (CommonsFault.httpStatus(503), "HTTP 503"),
        (.apiError(code: "cirrussearch-backend-error", info: "We could not complete your search"), "cirrussearch-backend-error"),
        (.html, "not JSON"),
        (.tooManyRequests(retryAfter: 600), "wait 600 s"),
    ])
    func aFailedWiderSearchLeavesARetryableAlbum(fault: CommonsFault, says: String) async throws {
        try await CommonsAlbums.with(longestWait: .seconds(5), catalogue: Self.catalogue, options: Self.options) { albums in
            let pin = try await albums.store.dropPin(at: Self.place)
            var seen = Set(try await Self.collection(albums, pin, 1).slots.map(\.photo.remoteID))
            try await albums.pipeline.newCollection(for: pin)
            seen.formUnion(try await Self.collection(albums, pin, 2).slots.map(\.photo.remoteID))

            // The third collection needs the wider search, and it fails.
            albums.double.controls.failNextSearches(with: [fault])
            try await albums.pipeline.newCollection(for: pin)
            let failed = try await albums.eventually("the failure") {
                guard $0.pins[pin]?.album.collection == 3, case .failed = $0.pins[pin]?.album.status else { return false }
                return true
            }
            guard case .failed(let reason) = failed.pins[pin]!.album.status else { return }
            #expect(reason.contains(says), "\(reason)")
            #expect(failed.pins[pin]!.album.isNewCollectionEnabled)

            try await albums.pipeline.retry(pin)
            let third = try await Self.collection(albums, pin, 3)
            #expect(third.slots.count == 120 && third.request?.page == 3)
            #expect(seen.isDisjoint(with: third.slots.map(\.photo.remoteID)))
        }
    }
}
