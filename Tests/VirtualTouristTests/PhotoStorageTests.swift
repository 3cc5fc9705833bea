import BlobStore
import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

@Suite struct PhotoStorageTests {
    let rome = Coordinate(latitude: 41.89, longitude: 12.49)

    func options(retention: Duration = .zero, grace: Duration = .zero) -> StoreOptions {
        var options = storeOptions()
        options.retention = retention
        options.blobs.grace = grace
        return options
    }

    /// Drops a pin and fills its album with `count` stored photos (fake photos `first…`).
    @discardableResult
    func album(_ store: TouristStore, first: UInt64, count: Int) async throws -> PinID {
        let pin = try await store.dropPin(at: rome)
        let requested = try await store.requestAlbum(for: pin, perPage: 30, cause: nil)
        let collection = store.state.pins[pin]!.album.collection
        let listed = try await store.recordListing(
            PhotoListing(pin: pin, collection: collection, page: 1, pages: 1, total: UInt64(count), photos: listedPhotos(count)),
            cause: requested.sequence)
        for slot in 0..<UInt32(count) {
            let lease = try store.storePhoto(fakePhoto(first + UInt64(slot)))
            try await store.recordDownload(lease, pin: pin, collection: collection, slot: slot, cause: listed.sequence)
        }
        return pin
    }

    @Test func removingPhotosCollectionsAndPinsLeavesBlobsThatCollectionReclaims() async throws {
        let folder = TemporaryFolder("photos")
        let store = try await TouristStore.open(at: folder.path, options: options())
        let a = try await album(store, first: 100, count: 3)
        let b = try await album(store, first: 200, count: 2)
        let c = try await album(store, first: 300, count: 2)
        #expect(try store.collectGarbage().collected.isEmpty, "every blob is in an album")

        try await store.removePhoto(1, from: a)
        try await store.replaceCollection(of: b, page: 2, perPage: 30)
        try await store.removePin(c)
        let report = try store.collectGarbage()
        #expect(Set(report.collected) == [digest(101), digest(200), digest(201), digest(300), digest(301)])
        #expect(report.reclaimedBytes == Int64([101, 200, 201, 300, 301].map { fakePhoto($0).count }.reduce(0, +)))
        for seed in [100, 102] as [UInt64] { #expect(try store.photoBytes(digest(seed)) == fakePhoto(seed)) }
        #expect(try !store.isPhotoStored(digest(101)))
        #expect(try store.collectGarbage().collected.isEmpty)
        try await store.close()
    }

    /// Within the retention window, removed photos keep their images, so recent history shows
    /// them; past it, the history still has the photo's details but its image is collected.
    @Test func theRetentionWindowKeepsRecentHistorysImages() async throws {
        let folder = TemporaryFolder("retention")
        let clock = TestClock()
        var settings = options(retention: .seconds(3_600))
        settings.log.clock = clock
        let store = try await TouristStore.open(at: folder.path, options: settings)
        let pin = try await album(store, first: 1, count: 2)
        let before = store.lastSequence
        try await store.removePhoto(0, from: pin)
        clock.advance(microseconds: 1_800 * 1_000_000)  // half an hour later
        try await store.dragPin(pin, to: Coordinate(latitude: 1, longitude: 1))  // something happens
        #expect(try store.collectGarbage().collected.isEmpty, "both images were in use within the hour")
        let past = try store.state(at: before)
        #expect(try past.pins[pin]!.album.slots.allSatisfy { try store.isPhotoStored($0.digest!) })

        clock.advance(microseconds: 3_601 * 1_000_000)  // the removals are now older than the window
        try await store.changeRegion(to: MapRegion(center: rome, latitudeSpan: 1, longitudeSpan: 1))
        #expect(Set(try store.collectGarbage().collected) == [digest(1), digest(2)])
        let old = try store.state(at: before).pins[pin]!.album.slots
        #expect(old.map(\.photo.remoteID) == ["p0", "p1"], "the photos' details are still in history")
        #expect(try old.allSatisfy { try !store.isPhotoStored($0.digest!) }, "their images were collected")
        try await store.close()
    }

    @Test func theStoresOwnCollectorRemovesUnusedImagesWithoutBeingAsked() async throws {
        let folder = TemporaryFolder("automatic")
        var settings = options()
        settings.collectionInterval = .milliseconds(20)
        let store = try await TouristStore.open(at: folder.path, options: settings)
        let pin = try await album(store, first: 1, count: 2)
        try await store.removePhoto(0, from: pin)
        var waited = 0  // a wait for the collector, not a bound on it: up to 60 s on a loaded machine
        while try store.isPhotoStored(digest(1)), waited < 6_000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(try !store.isPhotoStored(digest(1)))
        #expect(try store.isPhotoStored(digest(2)))
        if case .success(let report)? = store.lastAutomaticCollection { #expect(report.scanned >= 1) } else {
            Issue.record("no automatic collection reported")
        }
        try await store.close()
    }

    @Test func anEventNeverNamesAnImageThatIsNotStored() async throws {
        let folder = TemporaryFolder("dangling")
        let store = try await TouristStore.open(at: folder.path, options: options())
        let pin = try await store.dropPin(at: rome)
        try await store.requestAlbum(for: pin, perPage: 30)
        try await store.recordListing(PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: 1, photos: listedPhotos(1)), cause: nil)
        let error = await expectDomainError(.invalidArgument) {
            try await store.recordDownload(DownloadedPhoto(pin: pin, collection: 1, slot: 0, digest: digest(5), byteCount: 9, mediaType: "image/jpeg"), cause: nil)
        }
        #expect(error?.message.contains("is not stored") == true)
        let html = await expectDomainError(.invalidArgument) { try store.storePhoto(Array("<html>503</html>".utf8)) }
        #expect(html?.message.contains("HTML") == true)
        try await store.close()
    }

    /// A crash anywhere between writing an image and appending its event leaves at most an
    /// unreferenced blob or a temporary file: never an event that names a missing image.
    @Test(arguments: ["open:tmp", "write:tmp", "sync:tmp", "rename:", "syncdir:", "write:seg"])
    func aFailureBetweenStoringAndRecordingLeavesOnlyOrphans(_ point: String) async throws {
        let folder = TemporaryFolder("crash")
        let parts = point.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let (operation, suffix) = (parts[0], parts[1])
        let fileSystem = InstrumentedFileSystem()
        var settings = options()
        settings.log.preallocationSize = 0
        let store = try await TouristStore.open(at: folder.path, options: settings, fileSystem: fileSystem)
        let pin = try await album(store, first: 1, count: 1)
        try await store.replaceCollection(of: pin, page: 2, perPage: 30)
        try await store.recordListing(PhotoListing(pin: pin, collection: 2, page: 2, pages: 2, total: 2, photos: listedPhotos(2)), cause: nil)

        fileSystem.failure = { op, path, _ in op == operation && (suffix.isEmpty || path.hasSuffix(suffix)) ? EIO : nil }
        var appended = false
        do {
            let lease = try store.storePhoto(fakePhoto(50))
            try await store.recordDownload(lease, pin: pin, collection: 2, slot: 0, cause: nil)
            appended = true
        } catch {
            // The failure reached the caller; nothing more is attempted, as after a crash.
        }
        #expect(!appended, "the injected failure at \(point) must stop the download")
        fileSystem.failure = nil
        try? await store.close()

        // After the "crash": every image the state names is stored; orphans go.
        let reopened = try await TouristStore.open(at: folder.path, options: options())
        for digest in reopened.state.referencedDigests { #expect(try reopened.isPhotoStored(digest), "\(point)") }
        #expect(reopened.state.pins[pin]!.album.slots.allSatisfy { $0.state == .placeholder }, "\(point)")
        _ = try reopened.collectGarbage()
        let left = try FileManager.default.subpathsOfDirectory(atPath: folder.sub("blobs/sha256")).filter { $0.count > 3 }
        #expect(left.isEmpty, "\(point): \(left)")
        try await reopened.close()
    }
}
