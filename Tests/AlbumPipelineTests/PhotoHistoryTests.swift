import EventLog
import Foundation
import PhotoSources
import Testing
import VirtualTourist

@testable import AlbumPipeline

/// The choice of photos for a New Collection, from a pin's events alone.
@Suite struct PhotoHistoryTests {
    let pin = PinID(1)
    let time = LogTimestamp(microsecondsSinceEpoch: 1_000)

    func listed(_ collection: UInt32, _ ids: [String], at sequence: UInt64) -> RecordedEvent {
        let photos = ids.map { ListedPhoto(remoteID: $0, url: "http://127.0.0.1/\($0).png", title: $0) }
        let listing = PhotoListing(pin: pin, collection: collection, page: 1, pages: 1, total: UInt64(ids.count), photos: photos)
        return RecordedEvent(sequence: sequence, timestamp: time, cause: nil, event: .photosListed(listing))
    }

    func removed(_ collection: UInt32, slot: UInt32, at sequence: UInt64) -> RecordedEvent {
        RecordedEvent(sequence: sequence, timestamp: time, cause: nil, event: .photoRemoved(pin: pin, collection: collection, slot: slot))
    }

    func found(_ ids: [String]) -> [FoundPhoto] { ids.map { FoundPhoto(id: $0, title: $0, url: "http://127.0.0.1/\($0).png") } }

    @Test func removedPhotosFromEveryCollectionStayOut() {
        let history = PhotoHistory(events: [
            listed(1, ["a", "b", "c"], at: 3), removed(1, slot: 1, at: 4),
            listed(2, ["d", "e"], at: 7), removed(2, slot: 0, at: 8),
        ], before: 3)
        #expect(history.removed == ["b", "d"])
        #expect(history.previous == ["d", "e"])
        #expect(history.choose(from: found(["a", "b", "c", "d", "e", "f"])).map(\.id) == ["a", "c", "f"])
    }

    @Test func withNothingNewThePreviousOnesNotRemovedAreShown() {
        let history = PhotoHistory(events: [listed(1, ["a", "b", "c"], at: 3), removed(1, slot: 0, at: 4)], before: 2)
        #expect(history.choose(from: found(["a", "b", "c"])).map(\.id) == ["b", "c"])
        #expect(history.choose(from: found(["a"])).isEmpty)
    }

    @Test func aListingOfTheCollectionSearchedForIsNotItsOwnPast() {
        // A listing of collection 2 (say, from a search that raced) is not "the last set" for 2.
        let history = PhotoHistory(events: [listed(1, ["a"], at: 3), listed(2, ["b"], at: 6)], before: 2)
        #expect(history.previous == ["a"])
        #expect(PhotoHistory().choose(from: found(["x", "y"])).map(\.id) == ["x", "y"])
    }
}
