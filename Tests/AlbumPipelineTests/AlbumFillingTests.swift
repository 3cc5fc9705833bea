import AlbumPipeline
import DemoPhotoServer
import Foundation
import PhotoSources
import Testing
import VirtualTourist

@Suite(.serialized, .timeLimit(.minutes(5))) struct AlbumFillingTests {
    @Test func placeholdersComeFirstThenPhotosArriveOneByOne() async throws {
        try await Harness.with { harness in
            harness.server.controls.holdImages()
            let place = Places.few
            let count = Places.count(place)
            let pin = try await harness.store.dropPin(at: place)

            // Pre-fetch: the listing fixes the placeholders before any image has arrived.
            let listed = try await harness.eventually("the listing") { $0.pins[pin]?.album.phase == .listed }
            #expect(listed.pins[pin]!.album.status == .downloading(done: 0, of: count))
            #expect(listed.pins[pin]!.album.slots.allSatisfy { $0.state == .placeholder })
            #expect(!listed.pins[pin]!.album.isNewCollectionEnabled)

            // Downloads run a few at once, never all (the most ever held is checked at the end);
            // the others wait without a task of their own (a task each cost memory).
            await harness.waitForHeldImages(harness.options.concurrentDownloads)
            let activity = await harness.pipeline.activity
            #expect(activity.downloads == count)
            #expect(activity.downloadsWaiting == count - harness.options.concurrentDownloads)
            await #expect(throws: DomainError.self) { try await harness.pipeline.newCollection(for: pin) }

            // Each photo lands as soon as it has downloaded, not when all have.
            for done in 1...3 {
                harness.server.controls.releaseImages(1)
                let state = try await harness.eventually("photo \(done)") {
                    $0.pins[pin]?.album.status == .downloading(done: done, of: count)
                }
                #expect(state.pins[pin]!.album.slots.count { $0.digest != nil } == done)
            }
            harness.server.controls.releaseAllImages()
            let complete = try await harness.eventually("the whole album") { $0.pins[pin]?.album.status == .complete }
            #expect(complete.pins[pin]!.album.isNewCollectionEnabled)
            #expect(count > harness.options.concurrentDownloads)
            #expect(harness.server.controls.mostHeldImageRequests == harness.options.concurrentDownloads)

            // The stored bytes are the service's images, slot by slot, in the listing's order.
            let ids = Places.photoIDs(place, page: 1, perPage: 21)
            for slot in complete.pins[pin]!.album.slots {
                #expect(slot.photo.remoteID == ids[Int(slot.number)])
                let bytes = try harness.store.photoBytes(try #require(slot.digest, "slot \(slot.number): \(slot.state)"))
                #expect(bytes == DemoCatalogue().image(photoID: slot.photo.remoteID, width: 96, height: 72))
            }

            // The story in the log: each event names its cause.
            let events = try harness.events()
            #expect(events.map(\.event.typeName).prefix(3) == ["PinDropped", "AlbumRequested", "PhotosListed"])
            #expect(events[1].cause == events[0].sequence && events[2].cause == events[1].sequence)
            let downloads = events.filter { $0.event.typeName == "PhotoDownloaded" }
            #expect(downloads.count == count && downloads.allSatisfy { $0.cause == events[2].sequence })
            #expect(await harness.pipeline.problems.isEmpty)
        }
    }

    @Test func aPlaceWithoutPhotosShowsNoImages() async throws {
        try await Harness.with { harness in
            let pin = try await harness.store.dropPin(at: Places.empty)
            let state = try await harness.eventually("no images") { $0.pins[pin]?.album.status == .noImages }
            #expect(state.pins[pin]!.album.isNewCollectionEnabled)
            #expect(harness.server.controls.imageRequests == 0)
        }
    }

    @Test func openingAnAlbumThatExistsDownloadsNothingAgain() async throws {
        try await Harness.with { harness in
            let pin = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            await harness.pipeline.waitUntilIdle()
            let (searches, images) = (harness.server.controls.searches.count, harness.server.controls.imageRequests)
            let sequence = harness.store.lastSequence
            let album = try await harness.pipeline.open(pin)
            await harness.pipeline.waitUntilIdle()
            #expect(album.status == .complete && album.isNewCollectionEnabled)
            #expect(harness.server.controls.searches.count == searches && harness.server.controls.imageRequests == images)
            #expect(harness.store.lastSequence == sequence)
        }
    }

    @Test func withoutPrefetchOpeningTheAlbumRequestsIt() async throws {
        var options = Harness.defaultOptions
        options.prefetch = false
        try await Harness.with(options: options) { harness in
            let pin = try await harness.store.dropPin(at: Places.few)
            await harness.pipeline.waitUntilIdle()
            #expect(harness.store.state.pins[pin]!.album.status == .notRequested)
            #expect(harness.server.controls.searches.isEmpty)
            _ = try await harness.pipeline.open(pin)
            try await harness.eventually("the album") { $0.pins[pin]?.album.status == .complete }
        }
    }

    @Test func newCollectionPagesStayInRangeAndChange() async throws {
        var options = Harness.defaultOptions
        options.perPage = 3
        try await Harness.with(options: options) { harness in
            let place = Places.many
            let last = PageChoice.lastServedPage(pages: (Places.count(place) + 2) / 3, perPage: 3)
            let pin = try await harness.store.dropPin(at: place)
            var page: UInt32 = 1
            for round in 1...12 {
                try await harness.eventually("collection \(round)") {
                    $0.pins[pin]?.album.isNewCollectionEnabled == true && $0.pins[pin]?.album.phase == .listed
                }
                let events = try await harness.pipeline.newCollection(for: pin)
                guard case .albumRequested(let request) = events[1].event else {
                    Issue.record("New Collection did not request")
                    break
                }
                #expect(request.page >= 1 && request.page <= UInt32(last), "page \(request.page) of \(last)")
                #expect(request.page != page)
                page = request.page
                let ids = Places.photoIDs(place, page: Int(page), perPage: 3)
                let state = try await harness.eventually("the new photos") {
                    $0.pins[pin]?.album.collection == request.collection && $0.pins[pin]?.album.status == .complete
                }
                #expect(state.pins[pin]!.album.slots.map(\.photo.remoteID) == ids)
            }
        }
    }
}
