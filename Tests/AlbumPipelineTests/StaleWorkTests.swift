import AlbumPipeline
import DemoPhotoServer
import Foundation
import PhotoSources
import Testing
import VirtualTourist

/// New Collection, drags and removals while work is in flight: nothing of a replaced
/// collection ever lands in the album that replaced it.
@Suite(.serialized, .timeLimit(.minutes(5))) struct StaleWorkTests {
    @Test func newCollectionWhileRetriesAreInFlightCancelsThemAndNoStalePhotoLands() async throws {
        try await Harness.with { harness in
            let place = Places.many
            // The first three images fail: the album completes with three failed photos.
            harness.server.controls.failImages { number, _ in number < 3 ? .httpStatus(500) : nil }
            let pin = try await harness.store.dropPin(at: place)
            let first = try await harness.eventually("the first album") { $0.pins[pin]?.album.status == .complete }
            #expect(first.pins[pin]!.album.slots.count { if case .failed = $0.state { true } else { false } } == 3)
            harness.server.controls.failImages(nil)

            // Retrying the three: they are held in flight while New Collection replaces the album.
            harness.server.controls.holdImages()
            try await harness.pipeline.retry(pin)
            await harness.waitForHeldImages(3)
            let replaced = try await harness.pipeline.newCollection(for: pin)
            let replacedAt = replaced[0].sequence
            let second = try await harness.eventually("the second listing") {
                $0.pins[pin]?.album.collection == 2 && $0.pins[pin]?.album.phase == .listed
            }
            harness.server.controls.releaseAllImages()
            let done = try await harness.eventually("the second album") {
                $0.pins[pin]?.album.collection == 2 && $0.pins[pin]?.album.status == .complete
            }
            await harness.pipeline.waitUntilIdle()

            guard case .albumRequested(let request) = replaced[1].event else { throw Harness.TimedOut() }
            #expect(request.page != 1)
            let ids = Places.photoIDs(place, page: Int(request.page), perPage: 21)
            #expect(done.pins[pin]!.album.slots.map(\.photo.remoteID) == ids)
            #expect(second.pins[pin]!.album.slots.count == ids.count)
            let stale = try harness.events().filter { event in
                guard event.sequence > replacedAt else { return false }
                switch event.event {
                case .photoDownloaded(let photo): return photo.collection == 1
                case .photoDownloadFailed(_, let collection, _, _): return collection == 1
                default: return false
                }
            }
            #expect(stale.isEmpty, "results of collection 1 landed after it was replaced: \(stale)")
            #expect(done.ignoredEvents == 0)
        }
    }

    @Test func aDragWhileTheSearchIsInFlightSearchesTheNewPlace() async throws {
        try await Harness.with { harness in
            // The first place's search stays in flight until the server stops.
            harness.server.controls.failNextSearches(with: [.held])
            let pin = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("the first request") { $0.pins[pin]?.album.phase == .listing }
            await harness.server.controls.heldSearches(reach: 1)
            try await harness.store.dragPin(pin, to: Places.otherFew)
            let done = try await harness.eventually("the album at the new place") {
                $0.pins[pin]?.album.collection == 2 && $0.pins[pin]?.album.status == .complete
            }
            let album = done.pins[pin]!.album
            #expect(album.request?.place == Places.otherFew)
            #expect(album.slots.map(\.photo.remoteID) == Places.photoIDs(Places.otherFew, page: 1, perPage: 21))
            let listings = try harness.events().compactMap { event -> PhotoListing? in
                if case .photosListed(let listing) = event.event { return listing }
                return nil
            }
            #expect(listings.map(\.collection) == [2], "the old place's search must not be listed")
        }
    }

    @Test func aDragWhilePhotosDownloadKeepsTheOldPlacesPhotosOut() async throws {
        try await Harness.with { harness in
            harness.server.controls.holdImages()
            let pin = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("the first listing") { $0.pins[pin]?.album.phase == .listed }
            await harness.waitForHeldImages(harness.options.concurrentDownloads)
            harness.server.controls.releaseImages(2)
            try await harness.eventually("two photos") { $0.pins[pin]?.album.status == .downloading(done: 2, of: Places.count(Places.few)) }
            let drag = try await harness.store.dragPin(pin, to: Places.otherFew)
            harness.server.controls.releaseAllImages()
            let done = try await harness.eventually("the album at the new place") {
                $0.pins[pin]?.album.collection == 2 && $0.pins[pin]?.album.status == .complete
            }
            await harness.pipeline.waitUntilIdle()
            let ids = Set(Places.photoIDs(Places.otherFew, page: 1, perPage: 21))
            #expect(done.pins[pin]!.album.slots.allSatisfy { ids.contains($0.photo.remoteID) && $0.digest != nil })
            let late = try harness.events().filter {
                guard $0.sequence > drag.sequence, case .photoDownloaded(let photo) = $0.event else { return false }
                return photo.collection == 1
            }
            #expect(late.isEmpty)
            // The old place's two photos are no longer referenced: collection may take them.
            #expect(done.referencedDigests.count == ids.count)
        }
    }

    @Test func removingAPinCancelsItsDownloads() async throws {
        try await Harness.with { harness in
            harness.server.controls.holdImages()
            let pin = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("the listing") { $0.pins[pin]?.album.phase == .listed }
            await harness.waitForHeldImages(harness.options.concurrentDownloads)
            #expect(await harness.pipeline.activity.downloads == Places.count(Places.few))
            let requestsBefore = harness.server.controls.imageRequests
            let removed = try await harness.store.removePin(pin)
            // The downloads end while their images are still held: they were cancelled.
            try await harness.waitUntilIdle()
            #expect(await harness.pipeline.activity.isIdle)
            #expect(try harness.events().last?.event == .pinRemoved(pin))
            // Work that comes later runs to its end, and the removed pin's downloads are not
            // among it: every image asked for since is the new album's.
            harness.server.controls.releaseAllImages()
            let other = try await harness.store.dropPin(at: Places.otherFew)
            try await harness.eventually("the other album") { $0.pins[other]?.album.status == .complete }
            try await harness.waitUntilIdle()
            #expect(
                harness.server.controls.imageRequests == requestsBefore + Places.count(Places.otherFew),
                "downloads went on after the pin was removed")
            let late = try harness.events().filter {
                guard $0.sequence > removed.sequence, case .photoDownloaded(let photo) = $0.event else { return false }
                return photo.pin == pin
            }
            #expect(late.isEmpty)
        }
    }
}
