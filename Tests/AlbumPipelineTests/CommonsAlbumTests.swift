import AlbumPipeline
import DemoPhotoServer
import Foundation
import PhotoServiceDoubles
import PhotoSources
import StorageTestSupport
import Testing
import VirtualTourist

/// A store, the Commons double on loopback, and a pipeline between them.
struct CommonsAlbums {
    let store: TouristStore
    let pipeline: AlbumPipeline
    let double: CommonsDouble
    let folder: String

    static func with(
        longestWait: Duration = .seconds(30), catalogue: DemoCatalogue = DemoCatalogue(),
        options: PipelineOptions = Harness.defaultOptions, _ body: (CommonsAlbums) async throws -> Void
    ) async throws {
        let double = try await CommonsDouble.start(catalogue: catalogue)
        let folder = TemporaryFolder.uniquePath("commons")
        var storeOptions = StoreOptions()
        storeOptions.log.durability = .none
        storeOptions.collectionInterval = nil
        storeOptions.pinIDs = CountingPinIDs()
        let store = try await TouristStore.open(at: folder, options: storeOptions)
        let client = try CommonsClient(
            endpoint: double.endpoint, contact: "tests@example.org", thumbnailWidth: 120, timeout: .seconds(120),
            longestWait: longestWait)
        let pipeline = try AlbumPipeline(store: store, source: CommonsPhotoSource(client: client), options: options)
        await pipeline.start()
        let albums = CommonsAlbums(store: store, pipeline: pipeline, double: double, folder: folder)
        do { try await body(albums) } catch {
            await albums.finish()
            throw error
        }
        await albums.finish()
    }

    func finish() async {
        await pipeline.stop()
        try? await store.close()
        await double.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Waits for the state `what` names. A hang is caught by the suites' time limit, not here:
    /// the whole suite runs in parallel on two cores, and a first collection of 120 photos took
    /// over 120 s while the devices' tests ran beside it.
    func eventually(_ what: String, _ condition: @escaping @Sendable (TouristState) -> Bool) async throws -> TouristState {
        try await store.waitForState(where: condition)
    }
}

@Suite(.serialized, .timeLimit(.minutes(10))) struct CommonsAlbumTests {
    @Test func aPinFillsWithCreditedPhotosFromCommons() async throws {
        try await CommonsAlbums.with { albums in
            let pin = try await albums.store.dropPin(at: Places.many)
            let done = try await albums.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            let slots = done.pins[pin]!.album.slots
            #expect(slots.count == 21)
            #expect(slots.allSatisfy { $0.digest != nil })
            #expect(slots.allSatisfy { !$0.photo.creator.isEmpty && !$0.photo.licenceName.isEmpty && !$0.photo.pageURL.isEmpty })
            #expect(slots[0].photo.creator == "Uploader 1" && slots[1].photo.creator == "Photographer 2 & friends")
            #expect(slots[0].photo.licenceURL == "https://creativecommons.org/licenses/by-sa/4.0")
            // The credit is in the listing's event itself, not only in the state.
            let listing = try albums.store.events().compactMap { recorded -> PhotoListing? in
                if case .photosListed(let listing) = recorded.event { return listing }
                return nil
            }.first
            #expect(listing?.photos.map(\.pageURL) == slots.map(\.photo.pageURL))
            #expect(albums.double.controls.mostAtOnce <= CommonsClient.maxConcurrentRequests)
        }
    }

    @Test func newCollectionShowsPhotosNotShownBefore() async throws {
        try await CommonsAlbums.with { albums in
            let pin = try await albums.store.dropPin(at: Places.many)
            var seen = Set<String>()
            for round in 1...3 {
                let done = try await albums.eventually("collection \(round)") {
                    $0.pins[pin]?.album.collection == UInt32(round) && $0.pins[pin]?.album.status == .complete
                }
                let ids = done.pins[pin]!.album.slots.map(\.photo.remoteID)
                #expect(ids.count == 21)
                #expect(seen.isDisjoint(with: ids), "collection \(round) repeats photos")
                seen.formUnion(ids)
                if round < 3 { try await albums.pipeline.newCollection(for: pin) }
            }
        }
    }

    @Test func aPlaceWithoutFilesIsNoImages() async throws {
        try await CommonsAlbums.with { albums in
            let pin = try await albums.store.dropPin(at: Places.empty)
            let done = try await albums.eventually("No Images") { $0.pins[pin]?.album.status == .noImages }
            #expect(done.pins[pin]!.album.isNewCollectionEnabled)
        }
    }

    @Test(arguments: [
        (CommonsFault.httpStatus(503), "HTTP 503"),
        (.apiError(code: "internal_api_error_DBQueryError", info: "Database query error"), "Database query error"),
        (.apiError(code: "badvalue", info: "Unrecognized value"), "badvalue"),
        (.tooManyRequests(retryAfter: 600), "wait 600 s"),
        (.maxlag(retryAfter: 600), "lagging"),
        (.html, "not JSON"),
    ])
    func aFailedSearchLeavesARetryableAlbum(fault: CommonsFault, says: String) async throws {
        try await CommonsAlbums.with(longestWait: .seconds(5)) { albums in
            albums.double.controls.failNextRequests(with: [fault])
            let pin = try await albums.store.dropPin(at: Places.few)
            let failed = try await albums.eventually("the failure") {
                if case .failed = $0.pins[pin]?.album.status { return true }
                return false
            }
            guard case .failed(let reason) = failed.pins[pin]!.album.status else { return }
            #expect(reason.contains(says), "\(reason)")
            #expect(failed.pins[pin]!.album.isNewCollectionEnabled)
            try await albums.pipeline.retry(pin)
            let done = try await albums.eventually("the retried album") { $0.pins[pin]?.album.status == .complete }
            #expect(!done.pins[pin]!.album.slots.isEmpty)
        }
    }

    @Test func failedThumbnailsBecomeFailedPhotosAndCanBeRetried() async throws {
        try await CommonsAlbums.with { albums in
            albums.double.controls.failThumbnails(with: 429)
            let pin = try await albums.store.dropPin(at: Places.few)
            let settled = try await albums.eventually("the failed photos") { $0.pins[pin]?.album.isNewCollectionEnabled == true }
            let slots = settled.pins[pin]!.album.slots
            #expect(!slots.isEmpty)
            #expect(slots.allSatisfy { if case .failed(let reason) = $0.state { reason.contains("HTTP 429") } else { false } })
            albums.double.controls.failThumbnails(with: nil)
            try await albums.pipeline.retry(pin)
            // Failed photos count as done, so "complete" holds before the retry; wait for the images.
            let done = try await albums.eventually("the retried photos") {
                $0.pins[pin]?.album.slots.allSatisfy { $0.digest != nil } == true
            }
            #expect(done.pins[pin]!.album.status == .complete)
        }
    }

    @Test func aMissingContactIsRefusedAndSaysSo() async throws {
        // A client the double refuses as Commons refuses one without a contact.
        let double = try await CommonsDouble.start()
        defer { Task { await double.stop() } }
        let client = try CommonsClient(endpoint: double.endpoint, contact: "no contact here")
        let outcome = await Result { () async throws(PhotoSourceError) in try await client.search(latitude: 1, longitude: 1, page: 1, perPage: 3) }
        guard case .failure(let error) = outcome else { Issue.record("accepted"); return }
        #expect(error.code == .refused && error.message.contains("HTTP 403") && error.message.contains("VT_CONTACT"))
    }
}

extension Result where Failure == PhotoSourceError {
    init(catching body: () async throws(PhotoSourceError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
