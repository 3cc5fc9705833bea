import AlbumPipeline
import DemoPhotoServer
import EventLog
import FileIO
import Foundation
import PhotoSources
import Testing
import VirtualTourist

@Suite(.serialized) struct ResumeTests {
    @Test func unfinishedAlbumsResumeWhenTheStoreOpens() async throws {
        try await Harness.with { harness in
            // Pin 1: listed, its downloads held. Pin 2: its search held. Then the program stops.
            harness.server.controls.holdImages()
            let downloading = try await harness.store.dropPin(at: Places.few)
            try await harness.eventually("pin 1's listing") { $0.pins[downloading]?.album.phase == .listed }
            try await harness.waitForHeldImages(harness.options.concurrentDownloads)
            harness.server.controls.releaseImages(2)
            try await harness.eventually("two photos") {
                $0.pins[downloading]?.album.status == .downloading(done: 2, of: Places.count(Places.few))
            }
            harness.server.controls.failNextSearches(with: [.delay(.seconds(5))])
            let searching = try await harness.store.dropPin(at: Places.otherFew)
            while harness.server.controls.searches.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
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
            let reader = try LogReader(directory: folder + "/log", fileSystem: PosixFileSystem())
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
