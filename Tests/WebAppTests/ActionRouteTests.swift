import Crypto
import Foundation
import Testing
import VirtualTourist
import WebApp

/// The JSON routes that change things, over HTTP, against the real store, pipeline and demo
/// photo service.
@Suite struct ActionRouteTests {
    @Test func droppedPinFillsItsAlbumAndItsPhotosAreServedByDigest() async throws {
        try await WebHarness.with { web in
            let dropped = try await web.send(.POST, "/api/pins", json: #"{"latitude": 48.8584, "longitude": 2.2945}"#)
            #expect(dropped.status == 201)
            let id = try #require(try dropped.json()["id"] as? String)
            let pin = try #require(PinID(parsing: id))
            // Pre-fetch: nobody opened the album, yet it fills.
            let state = try await web.eventually("the album to complete") { $0.pins[pin]?.album.status == .complete }
            let album = try #require(state.pins[pin]?.album)
            #expect(album.slots.count == 12)

            let answer = try await web.get("/api/pins/\(id)")
            let photos = try #require(((try answer.json())["album"] as? [String: Any])?["photos"] as? [[String: Any]])
            #expect(photos.count == 12)
            let digest = try #require(photos.first?["digest"] as? String)
            let image = try await web.get("/photos/\(digest)")
            #expect(image.status == 200)
            #expect(image.headers["Content-Type"].first == "image/png")
            #expect(image.headers["Cache-Control"].first == "public, max-age=31536000, immutable")
            #expect(SHA256.hash(data: Data(image.body)).map { String(format: "%02x", $0) }.joined() == digest)
            let again = try await web.get("/photos/\(digest)", headers: [("If-None-Match", "\"\(digest)\"")])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
        }
    }

    @Test func dragRemovePhotoNewCollectionAndRegionAreEvents() async throws {
        try await WebHarness.with { web in
            let id = try #require(try await web.send(.POST, "/api/pins", json: #"{"latitude": 35.0, "longitude": 135.7}"#).json()["id"] as? String)
            let pin = try #require(PinID(parsing: id))
            try await web.eventually("the first album") { $0.pins[pin]?.album.status == .complete }

            let dragged = try await web.send(.POST, "/api/pins/\(id)/drag", json: #"{"latitude": 48.8584, "longitude": 2.2945}"#)
            #expect(dragged.status == 200)
            #expect(try dragged.json()["latitude"] as? Double == 48.8584)
            let moved = try await web.eventually("the moved pin's album") { $0.pins[pin]?.album.status == .complete }
            #expect(moved.pins[pin]?.album.collection == 2)

            // Remove the first photo of the collection the page shows: the rest move up.
            let first = try #require(moved.pins[pin]?.album.slots.first)
            let removed = try await web.send(.DELETE, "/api/pins/\(id)/photos/\(first.number)?collection=2")
            #expect(removed.status == 200)
            #expect(web.store.state.pins[pin]?.album.slots.count == 11)
            #expect(web.store.state.pins[pin]?.album.slot(first.number) == nil)

            let replaced = try await web.send(.POST, "/api/pins/\(id)/new-collection")
            #expect(replaced.status == 200)
            #expect(try (replaced.json()["album"] as? [String: Any])?["new_collection_enabled"] as? Bool == false)
            let renewed = try await web.eventually("the new collection") { $0.pins[pin]?.album.status == .complete }
            #expect(renewed.pins[pin]?.album.collection == 3)

            let region = #"{"latitude": 35, "longitude": 135.7, "latitude_span": 2, "longitude_span": 3}"#
            #expect(try await web.send(.PUT, "/api/region", json: region).status == 200)
            let afterRegion = web.store.lastSequence
            #expect(try await web.send(.PUT, "/api/region", json: region).status == 200)
            #expect(web.store.lastSequence == afterRegion, "the same region again appends nothing")
            #expect(web.store.state.region?.latitudeSpan == 2)

            let types = try web.store.events().map(\.event.typeName)
            for type in ["PinDropped", "PinDragged", "PhotoRemoved", "CollectionReplaced", "RegionChanged"] {
                #expect(types.contains(type), "no \(type) in \(types)")
            }
            #expect(try await web.send(.DELETE, "/api/pins/\(id)").status == 200)
            #expect(web.store.state.pins.isEmpty)
        }
    }

    @Test func newCollectionIsRefusedWhileDownloading() async throws {
        try await WebHarness.with { web in
            web.photos.controls.holdImages()
            let id = try #require(try await web.send(.POST, "/api/pins", json: #"{"latitude": 10, "longitude": 10}"#).json()["id"] as? String)
            let pin = try #require(PinID(parsing: id))
            try await web.eventually("placeholders") { $0.pins[pin]?.album.phase == .listed }
            let before = web.store.lastSequence
            let refused = try await web.send(.POST, "/api/pins/\(id)/new-collection")
            #expect(refused.status == 409)
            #expect(refused.errorCode == "album-busy")
            #expect(web.store.state.pins[pin]?.album.collection == 1)
            #expect(web.store.lastSequence >= before)
            web.photos.controls.releaseAllImages()
            try await web.eventually("the album") { $0.pins[pin]?.album.isNewCollectionEnabled == true }
            #expect(try await web.send(.POST, "/api/pins/\(id)/new-collection").status == 200)
        }
    }
}
