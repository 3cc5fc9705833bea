import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

@Suite struct TimeTravelTests {
    @Test func theStateAtEverySequenceEqualsAFreshFoldOfThatPrefix() async throws {
        let folder = TemporaryFolder("travel")
        var story = StoryGenerator(seed: 51)
        story.generate(400)
        let store = try await TouristStore.open(at: folder.path, options: storeOptions(snapshotInterval: 37))
        try storeFakePhotos(store)
        for recorded in story.events { try await store.record(recorded.event, cause: recorded.cause) }
        for sequence in 0...400 as ClosedRange<UInt64> {
            #expect(try store.state(at: sequence) == fold(story.events.prefix(Int(sequence))), "at \(sequence)")
        }
        await expectDomainError(.invalidArgument) { try store.state(at: 401) }
        try await store.close()
    }

    /// Time travel replays from the state it computed last when the next point lies a little
    /// after it (the slider moving on): jumps back, far ahead and forward must all give the
    /// fold of their prefix, and a forget must not let an earlier state of the place serve.
    @Test func statesComputedFromTheLastOneAreTheSameAsFromASnapshot() async throws {
        let folder = TemporaryFolder("travel-memo")
        var story = StoryGenerator(seed: 52)
        story.generate(300)
        let store = try await TouristStore.open(at: folder.path, options: storeOptions(snapshotInterval: 41))
        try storeFakePhotos(store)
        for recorded in story.events { try await store.record(recorded.event, cause: recorded.cause) }
        for sequence in [250, 3, 120, 121, 299, 7, 7, 8, 300, 150, 90] as [UInt64] {
            #expect(try store.state(at: sequence) == fold(story.events.prefix(Int(sequence))), "at \(sequence)")
        }
        // The remembered state holds a pin; once that pin is forgotten, later states lack it.
        let pin = try #require(store.state.pins.keys.min())
        let before = try store.state(at: 290)
        #expect(before.pins[pin] != nil)
        _ = try await store.forget(pin)
        #expect(try store.state(at: 291).pins[pin] == nil, "a state from before the forget was replayed on")
        #expect(try store.state(at: 290).pins[pin] == nil)
        try await store.close()
    }

    /// A store holding a generated story of `events` events, closed.
    static func closedStore(_ label: String, seed: UInt64, events: Int, snapshotInterval: UInt64) async throws
        -> (TemporaryFolder, StoryGenerator)
    {
        let folder = TemporaryFolder(label)
        var story = StoryGenerator(seed: seed)
        story.generate(events)
        let store = try await TouristStore.open(at: folder.path, options: storeOptions(snapshotInterval: snapshotInterval))
        try storeFakePhotos(store)
        for recorded in story.events {
            try await store.record(recorded.event, cause: recorded.cause)
            // Each crossing of the interval gets its own snapshot, as on a quiet machine: a
            // snapshot still being written when the next crossing comes covers the newest state
            // instead, and on a starved machine a store of 600 events kept only 2 of 11.
            try await store.processor.exclusively { access in await access.snapshotsSettled() }
        }
        try await store.close()
        return (folder, story)
    }

    /// A diff replays the later state on from the earlier one when no snapshot lies between
    /// them or they lie close, and loads a snapshot otherwise: either way, in both directions,
    /// it is the diff of the two states folded fresh. (Every pair here lies close by the
    /// default distance; a distance of 0 makes the pairs with a snapshot between load it.)
    @Test func aDiffIsTheDiffOfTheTwoFoldedStatesWhicheverWayItIsComputed() async throws {
        let (folder, story) = try await Self.closedStore("travel-diff", seed: 54, events: 400, snapshotInterval: 37)
        let reader = try StoreReader.open(at: folder.path)
        #expect(try reader.snapshotSequences().count > 3)
        for (from, to) in [(100, 110), (110, 100), (30, 390), (390, 30), (0, 400), (200, 200), (36, 38), (1, 2)] as [(UInt64, UInt64)] {
            let expected = fold(story.events.prefix(Int(from))).difference(to: fold(story.events.prefix(Int(to))))
            for distance in [0, TimeTravelMemo.replayRatherThanLoad] {
                let same = try reader.difference(from: from, to: to, replayingUpTo: distance) == expected
                #expect(same, "from \(from) to \(to), replaying up to \(distance) events")
            }
            #expect(try reader.difference(from: from, to: to) == reader.difference(from: from, to: to, replayingUpTo: TimeTravelMemo.replayRatherThanLoad))
        }
        await expectDomainError(.invalidArgument) { try reader.difference(from: 3, to: 401) }
    }

    /// `history` decodes only events whose payload holds the pin's eight id bytes; what it
    /// returns must be exactly the events about the pin, for every pin of a story.
    @Test func aPinsHistoryIsEveryEventAboutItAndNothingElse() async throws {
        let (folder, story) = try await Self.closedStore("history-all", seed: 53, events: 500, snapshotInterval: 97)
        let reader = try StoreReader.open(at: folder.path)
        let pins = Set(story.events.compactMap(\.event.pin))
        #expect(pins.count > 3)
        for pin in pins {
            let expected = story.events.filter { $0.event.pin == pin }.map(\.sequence)
            #expect(try reader.history(of: pin).map(\.sequence) == expected, "pin \(pin)")
        }
        #expect(try reader.history(of: PinID(0)).isEmpty)
    }

    @Test func thePinBytesSearchFindsTheIdAtEveryOffsetAndOnlyThere() {
        let id: [UInt8] = [7, 1, 2, 3, 4, 5, 6, 9]
        for length in 0..<40 {
            let noise = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 7) }  // starts with 7, never the rest
            #expect(!StoreReader.payload(noise[...], contains: id), "length \(length)")
            for offset in 0...length {
                var payload = noise
                payload.insert(contentsOf: id, at: offset)
                #expect(StoreReader.payload(payload[...], contains: id), "length \(length), at \(offset)")
                #expect(StoreReader.payload(payload[1...], contains: id) == (offset >= 1), "sliced, at \(offset)")
                var broken = payload
                broken[offset + 7] ^= 0xFF
                #expect(!StoreReader.payload(broken[...], contains: id), "its last byte changed, at \(offset)")
            }
        }
    }

    @Test func theStateAtATimeIsTheStateAfterTheLastEventByThen() async throws {
        let folder = TemporaryFolder("time")
        let clock = TestClock()
        let store = try await TouristStore.open(at: folder.path, options: storeOptions(clock: clock))
        let start = clock.now()
        var times: [LogTimestamp] = []
        for index in 0..<10 {
            try await store.dropPin(at: Coordinate(latitude: Double(index), longitude: 0))
            times.append(clock.now())
            clock.advance(microseconds: 1_000)
        }
        #expect(try store.sequence(atTime: start.adding(microseconds: -1)) == 0)
        #expect(try store.state(atTime: start.adding(microseconds: -1)).pins.isEmpty)
        for (index, time) in times.enumerated() {
            #expect(try store.sequence(atTime: time) == UInt64(index + 1))
            #expect(try store.sequence(atTime: time.adding(microseconds: 999)) == UInt64(index + 1))
            #expect(try store.state(atTime: time).pins.count == index + 1)
        }
        #expect(try store.sequence(atTime: LogTimestamp(microsecondsSinceEpoch: .max)) == 10)
        try await store.close()
    }

    @Test func theDifferenceBetweenTwoMomentsNamesWhatChanged() async throws {
        let folder = TemporaryFolder("diff")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        try storeFakePhotos(store)
        let rome = Coordinate(latitude: 41.9, longitude: 12.5)
        let a = try await store.dropPin(at: rome)
        let b = try await store.dropPin(at: rome)
        try await store.requestAlbum(for: a, perPage: 30)
        try await store.recordListing(PhotoListing(pin: a, collection: 1, page: 1, pages: 1, total: 2, photos: listedPhotos(2)), cause: nil)
        try await store.recordDownload(DownloadedPhoto(pin: a, collection: 1, slot: 0, digest: digest(1), byteCount: 4, mediaType: "image/jpeg"), cause: nil)
        let before = store.lastSequence
        try await store.recordDownload(DownloadedPhoto(pin: a, collection: 1, slot: 1, digest: digest(2), byteCount: 4, mediaType: "image/jpeg"), cause: nil)
        try await store.removePhoto(0, from: a)
        let c = try await store.dropPin(at: rome)
        try await store.dragPin(b, to: Coordinate(latitude: 1, longitude: 2))
        try await store.removePin(c)
        try await store.changeRegion(to: MapRegion(center: rome, latitudeSpan: 3, longitudeSpan: 4))
        let diff = try store.difference(from: before, to: store.lastSequence)
        #expect(diff.pinsAdded.isEmpty, "c came and went")
        #expect(diff.pinsRemoved.isEmpty)
        #expect(diff.pinsMoved == [StateDiff.Move(pin: b, from: rome, to: Coordinate(latitude: 1, longitude: 2))])
        #expect(diff.photosAdded.map(\.slot.number) == [1])
        #expect(diff.photosRemoved.map(\.slot.number) == [0])
        #expect(diff.region == StateDiff.RegionChange(before: nil, after: MapRegion(center: rome, latitudeSpan: 3, longitudeSpan: 4)))
        let back = try store.difference(from: store.lastSequence, to: 0)
        #expect(Set(back.pinsRemoved.map(\.id)) == [a, b])
        #expect(try store.difference(from: 3, to: 3).isEmpty)
        try await store.close()
    }

    @Test func aPinsHistoryAndAPhotosChainOfCauses() async throws {
        let folder = TemporaryFolder("causes")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        try storeFakePhotos(store)
        let rome = Coordinate(latitude: 41.9, longitude: 12.5)
        let a = try await store.dropPin(at: rome)
        let other = try await store.dropPin(at: rome)
        let requested = try await store.requestAlbum(for: a, perPage: 30, cause: 1)
        try await store.requestAlbum(for: other, perPage: 30, cause: 2)
        let listed = try await store.recordListing(PhotoListing(pin: a, collection: 1, page: 1, pages: 1, total: 1, photos: listedPhotos(1)), cause: requested.sequence)
        let downloaded = try await store.recordDownload(DownloadedPhoto(pin: a, collection: 1, slot: 0, digest: digest(1), byteCount: 4, mediaType: "image/jpeg"), cause: listed.sequence)
        try await store.removePin(other)

        #expect(try store.history(of: a).map(\.sequence) == [1, 3, 5, 6])
        #expect(try store.history(of: other).map(\.event.typeName) == ["PinDropped", "AlbumRequested", "PinRemoved"])
        #expect(try store.history(of: PinID(12345)).isEmpty)
        // Why is this photo here? Downloaded ← listed ← requested ← the pin dropped.
        #expect(try store.causes(of: downloaded.sequence).map(\.event.typeName) == ["PhotoDownloaded", "PhotosListed", "AlbumRequested", "PinDropped"])
        #expect(try store.causes(of: 1).map(\.sequence) == [1])
        await expectDomainError(.invalidArgument) { try store.causes(of: 99) }
        try await store.close()
    }
}
