import StorageTestSupport
import EventLog
import Foundation
import Testing
@testable import VirtualTourist

/// Every rule refuses its bad action with a clear error, and the store's bytes stay as they were.
@Suite struct RulesTests {
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    /// A store with: pin 1 downloading (3 photos listed, photo 0 downloaded), pin 2 complete,
    /// pin 3 listing, pin 4 with no album yet.
    func preparedStore(_ folder: TemporaryFolder) async throws -> TouristStore {
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        try storeFakePhotos(store)
        for _ in 1...4 { try await store.dropPin(at: rome) }
        for pin in [1, 2, 3] as [UInt64] { try await store.requestAlbum(for: PinID(pin), perPage: 30) }
        try await store.recordListing(PhotoListing(pin: PinID(1), collection: 1, page: 1, pages: 1, total: 3, photos: listedPhotos(3)), cause: nil)
        try await store.recordDownload(DownloadedPhoto(pin: PinID(1), collection: 1, slot: 0, digest: digest(1), byteCount: 10, mediaType: "image/jpeg"), cause: nil)
        try await store.recordListing(PhotoListing(pin: PinID(2), collection: 1, page: 1, pages: 1, total: 1, photos: listedPhotos(1)), cause: nil)
        try await store.recordDownload(DownloadedPhoto(pin: PinID(2), collection: 1, slot: 0, digest: digest(2), byteCount: 10, mediaType: "image/jpeg"), cause: nil)
        return store
    }

    @Test func everyBadActionIsRefusedAndChangesNothing() async throws {
        let folder = TemporaryFolder("rules")
        let store = try await preparedStore(folder)
        let before = try snapshotFiles(folder.path)
        let state = store.state
        let p1 = PinID(1), p2 = PinID(2), p3 = PinID(3), p4 = PinID(4), ghost = PinID(99)
        let photo = { (pin: PinID, collection: UInt32, slot: UInt32) in
            DownloadedPhoto(pin: pin, collection: collection, slot: slot, digest: digest(7), byteCount: 10, mediaType: "image/jpeg")
        }
        let cases: [(String, DomainError.Code, String, () async throws -> Void)] = [
            ("latitude 91", .invalidPlace, "latitude 91.0 is outside -90…90", { _ = try await store.dropPin(at: Coordinate(latitude: 91, longitude: 0)) }),
            ("longitude -180.5", .invalidPlace, "longitude -180.5", { _ = try await store.dropPin(at: Coordinate(latitude: 0, longitude: -180.5)) }),
            ("NaN", .invalidPlace, "not a number", { _ = try await store.dropPin(at: Coordinate(latitude: .nan, longitude: 0)) }),
            ("infinity", .invalidPlace, "not a number", { try await store.dragPin(p1, to: Coordinate(latitude: 0, longitude: .infinity)) }),
            ("zero span", .invalidPlace, "latitude span 0.0", { try await store.changeRegion(to: MapRegion(center: rome, latitudeSpan: 0, longitudeSpan: 1)) }),
            ("huge span", .invalidPlace, "longitude span 400.0", { try await store.changeRegion(to: MapRegion(center: rome, latitudeSpan: 1, longitudeSpan: 400)) }),
            ("unknown pin dragged", .unknownPin, "there is no pin 0000000000000063", { try await store.dragPin(ghost, to: rome) }),
            ("unknown pin removed", .unknownPin, "no pin", { try await store.removePin(ghost) }),
            ("unknown pin's album", .unknownPin, "no pin", { try await store.requestAlbum(for: ghost, perPage: 30) }),
            ("duplicate pin", .duplicatePin, "exists already", { try await store.record(.pinDropped(p1, rome)) }),
            ("photo not in the album", .unknownPhoto, "has no photo 9", { try await store.removePhoto(9, from: p1) }),
            ("photo of an album not listed", .wrongAlbumState, "not waiting for a photo", { try await store.recordDownload(photo(p3, 1, 0), cause: nil) }),
            ("New Collection while downloading", .albumBusy, "disabled while pin 0000000000000001's album is downloading 1 of 3", { try await store.replaceCollection(of: p1, page: 2, perPage: 30) }),
            ("New Collection while listing", .albumBusy, "is listing", { try await store.replaceCollection(of: p3, page: 2, perPage: 30) }),
            ("a second request", .wrongAlbumState, "already requested", { try await store.requestAlbum(for: p2, perPage: 30) }),
            ("a request for another place", .invalidArgument, "but pin 0000000000000004 is at", { try await store.record(.albumRequested(AlbumRequest(pin: p4, collection: 1, page: 1, perPage: 30, place: Coordinate(latitude: 1, longitude: 1)))) }),
            ("page 0", .invalidArgument, "pages start at 1", { try await store.requestAlbum(for: p4, page: 0, perPage: 30) }),
            ("a listing for an album not listing", .wrongAlbumState, "not waiting for a listing", { try await store.recordListing(PhotoListing(pin: p2, collection: 1, page: 1, pages: 1, total: 0, photos: []), cause: nil) }),
            ("a photo downloaded twice", .wrongAlbumState, "downloaded already", { try await store.recordDownload(photo(p1, 1, 0), cause: nil) }),
            ("a photo for a stale collection", .staleCollection, "which does not exist yet", { try await store.recordDownload(photo(p1, 2, 1), cause: nil) }),
            ("an empty image", .invalidArgument, "cannot be empty", { try await store.recordDownload(DownloadedPhoto(pin: p1, collection: 1, slot: 1, digest: digest(3), byteCount: 0, mediaType: "image/jpeg"), cause: nil) }),
            ("an HTML page", .invalidArgument, "text/html is not a photo type", { try await store.recordDownload(DownloadedPhoto(pin: p1, collection: 1, slot: 1, digest: digest(3), byteCount: 5, mediaType: "text/html"), cause: nil) }),
            ("a failure without a reason", .invalidArgument, "needs a reason", { try await store.recordDownloadFailure(pin: p1, collection: 1, slot: 1, reason: "", cause: nil) }),
            ("a credit link that is not http(s)", .invalidArgument, "page or licence link is not an http(s) URL", {
                var photos = listedPhotos(2)
                photos[1].pageURL = "javascript:alert(1)"
                try await store.recordListing(PhotoListing(pin: p3, collection: 1, page: 1, pages: 1, total: 2, photos: photos), cause: nil)
            }),
            ("a licence link that is not http(s)", .invalidArgument, "listed photo 0's page or licence link", {
                var photos = listedPhotos(1)
                photos[0].licenceURL = "data:text/html,hi"
                try await store.recordListing(PhotoListing(pin: p3, collection: 1, page: 1, pages: 1, total: 1, photos: photos), cause: nil)
            }),
            ("a listing of 501 photos", .invalidArgument, "at most 500", { try await store.recordListing(PhotoListing(pin: p3, collection: 1, page: 1, pages: 1, total: 501, photos: listedPhotos(501)), cause: nil) }),
        ]
        for (name, code, message, action) in cases {
            let error = await expectDomainError(code) { try await action() }
            #expect(error?.message.contains(message) == true, "\(name): \(error?.message ?? "nothing")")
        }
        #expect(store.state == state)
        try await store.close()
        // Closing wrote a snapshot and the log's tail checkpoint (derived data, docs/FORMAT.md);
        // the log itself is unchanged.
        let outsideTheLog = { (path: String) in path.hasPrefix("snapshots/") || path.hasSuffix(".head") }
        let after = try snapshotFiles(folder.path).filter { !outsideTheLog($0.key) }
        #expect(after == before.filter { !outsideTheLog($0.key) })
    }

    /// The classic bug of this app: photos of a replaced collection landing in the new one.
    @Test func aStaleCollectionsDownloadNeverLands() async throws {
        let folder = TemporaryFolder("stale")
        let store = try await preparedStore(folder)
        let p1 = PinID(1)
        // The pin is moved while its photos download: the album goes to collection 2 at once.
        try await store.dragPin(p1, to: Coordinate(latitude: 10, longitude: 10))
        let moved = store.state
        #expect(moved.pins[p1]!.album == Album(collection: 2))
        // The downloads still running for collection 1 finish, and are refused.
        for slot in [1, 2] as [UInt32] {
            let late = DownloadedPhoto(pin: p1, collection: 1, slot: slot, digest: digest(50 + UInt64(slot)), byteCount: 3, mediaType: "image/jpeg")
            let error = await expectDomainError(.staleCollection) { try await store.recordDownload(late, cause: nil) }
            #expect(error?.message.contains("was replaced") == true)
            await expectDomainError(.staleCollection) {
                try await store.recordDownloadFailure(pin: p1, collection: 1, slot: slot, reason: "cancelled", cause: nil)
            }
        }
        #expect(store.state == moved)

        // After New Collection on a complete album, a late duplicate for the old one is refused too.
        let p2 = PinID(2)
        try await store.replaceCollection(of: p2, page: 3, perPage: 30)
        let replaced = store.state
        #expect(replaced.pins[p2]!.album.collection == 2)
        #expect(replaced.pins[p2]!.album.status == .listing)
        try await store.recordListing(PhotoListing(pin: p2, collection: 2, page: 3, pages: 3, total: 70, photos: listedPhotos(2, prefix: "new")), cause: nil)
        await expectDomainError(.staleCollection) {
            try await store.recordDownload(DownloadedPhoto(pin: p2, collection: 1, slot: 0, digest: digest(60), byteCount: 3, mediaType: "image/jpeg"), cause: nil)
        }
        #expect(store.state.pins[p2]!.album.slots.allSatisfy { $0.state == .placeholder })
        #expect(!store.state.referencedDigests.contains(digest(60)))
        try await store.close()
    }
}
