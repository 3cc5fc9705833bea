import AlbumPipeline
import DemoPhotoServer
import Foundation
import PhotoSources
import Testing
import VirtualTourist

/// Whatever the service does, the album ends usable: failed, retryable, New Collection enabled.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FailureTests {
    @Test(arguments: [
        (DemoFault.httpStatus(500), "HTTP 500"),
        (.delay(.seconds(5)), "did not answer within 1.5 s"),
        (.statFail(code: 105, message: "Service currently unavailable"), "Service currently unavailable"),
        (.truncated, "not JSON"),
        (.html, "not JSON"),
        (.cutConnection, "closed before the whole answer"),
    ])
    func aFailedSearchLeavesARetryableAlbum(fault: DemoFault, says: String) async throws {
        try await Harness.with(searchTimeout: Harness.timeout(for: fault)) { harness in
            harness.server.controls.failNextSearches(with: [fault])
            let pin = try await harness.store.dropPin(at: Places.few)
            let failed = try await harness.eventually("the failure") {
                if case .failed = $0.pins[pin]?.album.status { return true }
                return false
            }
            guard case .failed(let reason) = failed.pins[pin]!.album.status else { return }
            #expect(reason.contains(says), "\(reason)")
            #expect(failed.pins[pin]!.album.isNewCollectionEnabled)
            #expect(try harness.events().last?.event.typeName == "AlbumRequestFailed")

            try await harness.pipeline.retry(pin)
            let done = try await harness.eventually("the retried album") { $0.pins[pin]?.album.status == .complete }
            #expect(done.pins[pin]!.album.slots.count == Places.count(Places.few))
        }
    }

    @Test func aFailedSearchCanAlsoBeReplacedByNewCollection() async throws {
        try await Harness.with { harness in
            harness.server.controls.failNextSearches(with: [.statFail(code: 100, message: "Invalid API Key (Key has expired)")])
            let pin = try await harness.store.dropPin(at: Places.many)
            try await harness.eventually("the failure") { $0.pins[pin]?.album.isNewCollectionEnabled == true }
            try await harness.pipeline.newCollection(for: pin)
            let done = try await harness.eventually("the new collection") {
                $0.pins[pin]?.album.collection == 2 && $0.pins[pin]?.album.status == .complete
            }
            #expect(done.pins[pin]!.album.slots.count == 21)
        }
    }

    @Test(arguments: [
        (DemoFault.httpStatus(500), "HTTP 500"),
        (.httpStatus(404), "HTTP 404"),
        (.delay(.seconds(5)), "did not answer within 1.5 s"),
        (.truncated, "cut short"),
        (.cutConnection, "closed before the whole answer"),
        (.html, "not a photo"),
    ])
    func failedDownloadsBecomeFailedPhotosAndCanBeRetried(fault: DemoFault, says: String) async throws {
        try await Harness.with(searchTimeout: Harness.timeout(for: fault)) { harness in
            // Every third image fails.
            harness.server.controls.failImages { number, _ in number % 3 == 0 ? fault : nil }
            let pin = try await harness.store.dropPin(at: Places.few)
            let count = Places.count(Places.few)
            let done = try await harness.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            let album = done.pins[pin]!.album
            let failed = album.slots.compactMap { slot -> String? in
                if case .failed(let reason) = slot.state { return reason }
                return nil
            }
            #expect(failed.count == (count + 2) / 3)
            #expect(failed.allSatisfy { $0.contains(says) }, "\(failed)")
            #expect(album.isNewCollectionEnabled)
            // Nothing that is not a whole image was stored as a photo.
            for slot in album.slots {
                guard let digest = slot.digest else { continue }
                #expect(try PhotoSourcesCheck.isWholePNG(harness.store.photoBytes(digest)!))
            }

            harness.server.controls.failImages(nil)
            // Retry later, as a person would: once the slow answers that timed out have ended
            // (until then the client's connections to the service may all be taken).
            await harness.server.controls.idle()
            try await harness.pipeline.retry(pin)
            let retried = try await harness.eventually("the retried photos") {
                $0.pins[pin]!.album.slots.allSatisfy { $0.digest != nil }
            }
            #expect(retried.pins[pin]!.album.status == .complete)
            await #expect(throws: DomainError.self) { try await harness.pipeline.retry(pin) }
        }
    }
}

enum PhotoSourcesCheck {
    static func isWholePNG(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) && ImageIntegrity.problem(with: bytes) == nil
    }
}
