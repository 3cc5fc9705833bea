import AlbumPipeline
import DemoPhotoServer
import EventLog
import FileIO
import Foundation
import PhotoSources
import Testing
import VirtualTourist

@Suite(.serialized, .timeLimit(.minutes(5))) struct ResumeTests {
    @Test func unfinishedAlbumsResumeWhenTheStoreOpens() async throws {
        try await Harness.with { harness in
            // Pin 1: listed, its downloads held. Pin 2: its search held. Then the program stops.
            harness.server.controls.holdImages()
            let downloading = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("pin 1's listing") { $0.pins[downloading]?.album.phase == .listed }
            await harness.waitForHeldImages(harness.options.concurrentDownloads)
            harness.server.controls.releaseImages(2)
            try await harness.eventually("two photos") {
                $0.pins[downloading]?.album.status == .downloading(done: 2, of: Places.count(Places.few))
            }
            // The second pin's search stays in flight until the server stops.
            harness.server.controls.failNextSearches(with: [.held])
            let searching = try await harness.store.dropPin(at: Places.otherFew)
            await harness.server.controls.heldSearches(reach: 1)
            try await harness.closeStore()

            // A pin dropped by a program without a pipeline (the command line, say).
            try await harness.open(startPipeline: false)
            let dropped = try await harness.store.dropPin(at: Places.many)
            try await harness.closeStore()

            harness.server.controls.releaseAllImages()
            let imagesBefore = harness.server.controls.imageRequests
            try await harness.open()
            let state = try await harness.eventually("every album") { state in
                [downloading, searching, dropped].allSatisfy { state.pins[$0]?.album.status == .complete }
            }
            #expect(state.pins[downloading]!.album.slots.count == Places.count(Places.few))
            // Only the photos still missing were downloaded again.
            let missing = Places.count(Places.few) - 2 + Places.count(Places.otherFew) + 21
            await harness.pipeline.waitUntilIdle()
            #expect(harness.server.controls.imageRequests - imagesBefore == missing)
            #expect(await harness.pipeline.problems.isEmpty)
        }
    }
}

/// The API key reaches the service and nothing else: no event, no file of the store, no
/// message.
@Suite(.serialized) struct KeySecrecyTests {
    @Test func theKeyAppearsInNoEventNoFileAndNoMessage() async throws {
        let secret = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
        try await Harness.with(key: secret, requiredKey: secret) { harness in
            // A service that echoes the key in its error, and other failures on the way.
            harness.server.controls.failNextSearches(with: [.statFail(code: 99, message: "Insufficient permissions for key \(secret)"), .html])
            harness.server.controls.failImages { number, _ in number % 4 == 0 ? .httpStatus(500) : nil }
            let first = try await harness.store.dropPin(at: Places.many)
            let second = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("two failed searches") { state in
                [first, second].allSatisfy { state.pins[$0]?.album.isNewCollectionEnabled == true }
            }
            try await harness.pipeline.retry(first)
            try await harness.pipeline.retry(second)
            try await harness.eventually("both albums") { state in
                [first, second].allSatisfy { state.pins[$0]?.album.status == .complete }
            }
            try await harness.pipeline.newCollection(for: first)
            try await harness.eventually("a new collection") { $0.pins[first]?.album.collection == 2 && $0.pins[first]?.album.status == .complete }
            let reasons = harness.store.state.pins.values.flatMap { pin in
                pin.album.slots.compactMap { if case .failed(let reason) = $0.state { reason } else { nil } }
            }
            #expect(!reasons.isEmpty)
            let messages = try harness.events().map { "\($0)" } + (await harness.pipeline.problems) + reasons
            #expect(messages.allSatisfy { !$0.contains(secret) })
            #expect(try harness.events().contains { "\($0)".contains("Insufficient permissions for key •••") })

            let folder = harness.folder
            try await harness.closeStore()
            // Every event's payload, as stored (the log compresses batches: read them back).
            let reader = try LogReader(directory: folder + "/log", fileSystem: PosixFileSystem(), payloadCodec: EventCodec.blockCodec)
            let cursor = try reader.events(from: 1, through: try reader.lastSequence())
            var payloads = 0
            while let event = try cursor.next() {
                #expect(!String(decoding: event.payload, as: UTF8.self).contains(secret))
                payloads += 1
            }
            #expect(payloads > 10)
            // And every file of the store, byte for byte.
            let walker = FileManager.default.enumerator(atPath: folder)!
            while let name = walker.nextObject() as? String {
                guard let data = FileManager.default.contents(atPath: folder + "/" + name) else { continue }
                #expect(data.range(of: Data(secret.utf8)) == nil, "the key is in \(name)")
            }
            try await harness.open(startPipeline: false)
        }
    }
}

/// The offline service takes a new port on every start; its photos are found again after a
/// restart (DemoPhotoSource), and an album none of whose photos came says so.
@Suite(.timeLimit(.minutes(5))) struct OfflineRestartTests {
    @Test func photosListedBeforeARestartComeFromTheServiceAsItIsNow() async throws {
        try await Harness.with { harness in
            harness.server.controls.holdImages()
            let pin = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("the listing") { $0.pins[pin]?.album.phase == .listed }
            await harness.waitForHeldImages(harness.options.concurrentDownloads)
            try await harness.closeStore()
            try await harness.restartServer()

            try await harness.open()
            let state = try await harness.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            let album = try #require(state.pins[pin]?.album)
            #expect(album.slotCounts.downloaded == Places.count(Places.few))
            #expect(harness.server.controls.imageRequests == Places.count(Places.few))
        }
    }

    @Test func anAlbumNoneOfWhosePhotosCameHasFailedAndTryAgainFillsIt() async throws {
        try await Harness.with { harness in
            harness.server.controls.failImages { _, _ in .httpStatus(404) }
            let pin = try await harness.store.dropPin(at: Places.few)
            let count = Places.count(Places.few)
            let failed = try await harness.eventually("the failed album") {
                if case .failed = $0.pins[pin]?.album.status { return true }
                return false
            }
            #expect(failed.pins[pin]?.album.status == .failed(reason: "none of its \(count) photos could be downloaded"))
            #expect(failed.pins[pin]?.album.isNewCollectionEnabled == true)

            harness.server.controls.failImages(nil)
            try await harness.pipeline.retry(pin)
            // The failed photos stay failed until each new try lands: wait for the last one.
            let done = try await harness.eventually("the album tried again") { $0.pins[pin]?.album.slotCounts.downloaded == count }
            #expect(done.pins[pin]?.album.status == .complete)
        }
    }

    @Test(arguments: [
        ("http://127.0.0.1:41234/images/123_q.png", "http://127.0.0.1:5000/images/123_q.png"),
        ("http://localhost:80/images/9_m.png", "http://127.0.0.1:5000/images/9_m.png"),
        ("http://[::1]:8080/images/9_m.png", "http://127.0.0.1:5000/images/9_m.png"),
        ("http://127.0.0.1:41234/photos/owner/1", "http://127.0.0.1:41234/photos/owner/1"),
        ("http://127.0.0.1/images/1.png", "http://127.0.0.1/images/1.png"),
        ("http://127.0.0.1:4x/images/1.png", "http://127.0.0.1:4x/images/1.png"),
        ("http://127.0.0.1:41234/images/a/../../etc", "http://127.0.0.1:41234/images/a/../../etc"),
        ("http://127.0.0.1:41234/images/1.png?x=1", "http://127.0.0.1:41234/images/1.png?x=1"),
        ("https://live.staticflickr.com/65535/1_q.jpg", "https://live.staticflickr.com/65535/1_q.jpg"),
        ("http://evil.example:41234/images/1.png", "http://evil.example:41234/images/1.png"),
    ])
    func onlyTheOfflineServicesImagesOnLoopbackAreAskedWhereItIsNow(url: String, asked: String) {
        #expect(DemoPhotoSource.locate(url, at: "http://127.0.0.1:5000") == asked)
    }
}
