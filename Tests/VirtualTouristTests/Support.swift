import DeviceLogs
import EventLog
import FileIO
import Foundation
import SeededRandom
import StorageTestSupport
import Synchronization
import Testing
@testable import VirtualTourist

/// Pin ids 1, 2, 3, … so that tests can name them.
final class CountingPinIDs: PinIDGenerator, @unchecked Sendable {
    private let counter = Mutex<UInt64>(0)
    func next() -> PinID { PinID(counter.withLock { $0 += 1; return $0 }) }
}

func storeOptions(clock: TestClock = TestClock(), snapshotInterval: UInt64 = 10_000, durability: LogConfiguration.Durability = .none) -> StoreOptions {
    var options = StoreOptions()
    options.collectionInterval = nil
    options.log.clock = clock
    options.log.durability = durability
    options.pinIDs = CountingPinIDs()
    options.snapshotInterval = snapshotInterval
    return options
}

/// A device's store options: pin ids drawn at random, as each device mints its own
/// (docs/DEVICES.md, "Rules by intent").
func deviceOptions(_ clock: TestClock, snapshotInterval: UInt64 = 10_000) -> StoreOptions {
    var options = storeOptions(clock: clock, snapshotInterval: snapshotInterval)
    options.pinIDs = RandomPinIDs()
    return options
}

/// A digest with no bytes behind it: for folds, which never look at blobs, and for the
/// committed fixture, which was written with these.
func arbitraryDigest(_ seed: UInt64) -> PhotoDigest {
    PhotoDigest(bytes: (0..<32).map { UInt8(truncatingIfNeeded: seed &* 0x9E37_79B9_7F4A_7C15 >> (($0 % 8) * 8)) ^ UInt8($0) })!
}

/// A tiny "photo": a JPEG signature and a few bytes, different for each seed.
func fakePhoto(_ seed: UInt64) -> [UInt8] {
    [0xFF, 0xD8, 0xFF, 0xE0] + Array("photo \(seed)".utf8)
}

/// The digest of ``fakePhoto(_:)``: what a store records once the photo is stored.
func digest(_ seed: UInt64) -> PhotoDigest { PhotoDigest.of(fakePhoto(seed)) }

/// Stores fake photos 0..<count, so that events naming their digests can be recorded.
func storeFakePhotos(_ store: TouristStore, count: UInt64 = 64) throws {
    for seed in 0..<count { try store.storePhoto(fakePhoto(seed)).release() }
}

/// A store in `folder` holding a generated story of `count` events, compacted into block files
/// of 4 KiB (each with its pin summary) and closed; returns the story.
func compactedStore(in folder: TemporaryFolder, seed: UInt64, count: Int) async throws -> StoryGenerator {
    var story = StoryGenerator(seed: seed)
    story.generate(count)
    var options = storeOptions(snapshotInterval: 500)
    options.log.hotTailSegmentSize = 4096
    options.log.blockSize = 4096
    options.log.compactsInBackground = false
    let store = try await TouristStore.open(at: folder.path, options: options)
    try storeFakePhotos(store)
    for recorded in story.events { try await store.record(recorded.event, cause: recorded.cause) }
    try store.compactLog()
    try await store.close()
    return story
}

func listedPhotos(_ count: Int, prefix: String = "p") -> [ListedPhoto] {
    (0..<count).map {
        ListedPhoto(remoteID: "\(prefix)\($0)", url: "https://photos.example/\(prefix)\($0).jpg", title: "photo \($0)", width: 150, height: 100)
    }
}

/// Expects `body` to throw a DomainError with `code`; returns it.
@discardableResult
func expectDomainError<T>(
    _ code: DomainError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> DomainError? {
    do {
        _ = try await body()
        Issue.record("expected \(code), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as DomainError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected DomainError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Random but valid histories: each step picks an event that the rules accept in the state so
/// far, so folding them never skips one. Seeded, so a failure repeats exactly.
struct StoryGenerator {
    var random: SplitMix
    var state = TouristState()
    var events: [RecordedEvent] = []
    var time: Int64 = 1_700_000_000_000_000
    var nextPin: UInt64 = 1

    init(seed: UInt64) { random = SplitMix(seed: seed) }

    mutating func coordinate() -> Coordinate {
        Coordinate(
            latitude: Double(Int.random(in: -89_000...89_000, using: &random)) / 1000,
            longitude: Double(Int.random(in: -179_000...179_000, using: &random)) / 1000)
    }

    /// Generates `count` more events.
    mutating func generate(_ count: Int) {
        var made = 0
        while made < count {
            if let (event, cause) = propose() {
                precondition(state.problem(with: event) == nil, "the generator proposed a refused event: \(event)")
                time += Int64.random(in: 0...5_000, using: &random)
                let recorded = RecordedEvent(
                    sequence: UInt64(events.count + 1), timestamp: LogTimestamp(microsecondsSinceEpoch: time),
                    cause: cause, event: event)
                state.apply(recorded)
                events.append(recorded)
                made += 1
            }
        }
    }

    private mutating func propose() -> (DomainEvent, UInt64?)? {
        let pins = state.pinsInDropOrder
        let pin = pins.isEmpty ? nil : pins[Int.random(in: 0..<pins.count, using: &random)]
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<12:
            defer { nextPin += 1 }
            return (.pinDropped(PinID(nextPin), coordinate()), nil)
        case 12..<16:
            guard let pin else { return nil }
            return (.pinDragged(pin.id, coordinate()), nil)
        case 16..<17:
            guard let pin else { return nil }
            return (.pinRemoved(pin.id), nil)
        case 17..<18:
            guard let pin else { return nil }
            return (.placeForgotten(pin: pin.id, erasedEvents: UInt64.random(in: 1...40, using: &random)), nil)
        case 23..<24:
            // A store of one device folds none, but every codec and reader carries it.
            var bytes = SplitMix(seed: random.next())
            let device = try! DeviceID(logID: (0..<16).map { _ in UInt8.random(in: 0...255, using: &bytes) })
            let head = (0..<32).map { _ in UInt8.random(in: 0...255, using: &bytes) }
            return (.deviceSeen(DeviceSeen(device: device, through: UInt64.random(in: 1...1_000, using: &random), head: head)), nil)
        case 18..<23:
            let span = Double(Int.random(in: 1...90, using: &random))
            return (.regionChanged(MapRegion(center: coordinate(), latitudeSpan: span, longitudeSpan: span * 2)), nil)
        default:
            guard let pin else { return nil }
            return albumStep(pin)
        }
    }

    private mutating func albumStep(_ pin: Pin) -> (DomainEvent, UInt64?)? {
        let album = pin.album
        switch album.phase {
        case .notRequested, .failed:
            if case .failed = album.phase, Bool.random(using: &random) {
                return (.collectionReplaced(pin: pin.id, oldCollection: album.collection, newCollection: album.collection + 1), nil)
            }
            let request = AlbumRequest(
                pin: pin.id, collection: album.collection, page: UInt32.random(in: 1...5, using: &random),
                perPage: 30, place: pin.coordinate)
            return (.albumRequested(request), pin.droppedAt)
        case .listing:
            if Int.random(in: 0..<8, using: &random) == 0 {
                return (.albumRequestFailed(pin: pin.id, collection: album.collection, reason: "service unavailable"), album.requestedAt)
            }
            let listing = PhotoListing(
                pin: pin.id, collection: album.collection, page: album.request!.page, pages: 9, total: 2_000,
                photos: listedPhotos(Int.random(in: 0...12, using: &random), prefix: "c\(album.collection)-"))
            return (.photosListed(listing), album.requestedAt)
        case .listed:
            let placeholders = album.slots.filter { !$0.isResolved }
            if let slot = placeholders.randomElement(using: &random), Int.random(in: 0..<5, using: &random) > 0 {
                if Int.random(in: 0..<10, using: &random) == 0 {
                    return (.photoDownloadFailed(pin: pin.id, collection: album.collection, slot: slot.number, reason: "timed out"), album.listedAt)
                }
                let photo = DownloadedPhoto(
                    pin: pin.id, collection: album.collection, slot: slot.number,
                    digest: digest(UInt64.random(in: 0..<40, using: &random)), byteCount: 1_000, mediaType: "image/jpeg")
                return (.photoDownloaded(photo), album.listedAt)
            }
            if let slot = album.slots.randomElement(using: &random), Bool.random(using: &random) {
                return (.photoRemoved(pin: pin.id, collection: album.collection, slot: slot.number), nil)
            }
            guard album.isNewCollectionEnabled else { return nil }
            return (.collectionReplaced(pin: pin.id, oldCollection: album.collection, newCollection: album.collection + 1), nil)
        }
    }
}


/// Folds events from the empty state.
func fold(_ events: some Sequence<RecordedEvent>) -> TouristState {
    var state = TouristState()
    state.apply(contentsOf: events)
    return state
}

/// Every event a reader of `store` gives, in its order (the merged order in a store of several devices).
func allEvents(_ reader: StoreReader) throws -> [RecordedEvent] {
    var events: [RecordedEvent] = []
    try reader.forEachEvent { events.append($0) }
    return events
}

/// The same, from a reader opened on `store` now.
func allEvents(inStore store: String) throws -> [RecordedEvent] { try allEvents(StoreReader.open(at: store)) }
