import EventLog
import Foundation
import SeededRandom
import VirtualTourist

/// A seeded model of real use, for every benchmark: sessions in which the map moves, a pin is
/// dropped, its album of 20 to 250 photos is listed and downloaded (about one in forty
/// downloads fails), a few photos are removed, some albums get a New Collection, some pins are
/// dragged (a new album follows), and once `livePins` pins exist the oldest is removed. Every
/// event passes the store's rules, so the same events can go through the real store.
///
/// Events come as *commits*, grouped as the app appends them: an action's events together,
/// each photo-service result on its own.
///
/// ```swift
/// var workload = Workload(seed: 2026, livePins: 1_000)
/// while workload.events < 100_000 {
///     for commit in workload.nextSession() { try log.append(contentsOf: commit.map { EventCodec.encode($0, cause: nil) }) }
/// }
/// workload.state   // what a replay must give
/// ```
public struct Workload {
    public private(set) var state = TouristState()
    /// Events produced so far.
    public private(set) var events = 0
    private var random: SplitMix
    private let livePins: Int
    private var session: [[DomainEvent]] = []
    private var words = ["harbour", "old", "town", "sunset", "bridge", "market", "street", "view", "park", "church",
                         "river", "from", "the", "night", "square", "tower", "beach", "museum", "trip", "day"]

    public init(seed: UInt64 = 2026, livePins: Int = 1_000) {
        random = SplitMix(seed: seed)
        self.livePins = max(1, livePins)
    }

    /// The next session: a list of commits (each one append in the app).
    public mutating func nextSession() -> [[DomainEvent]] {
        session = []
        let span = Double.random(in: 0.5...40, using: &random)
        commit([.regionChanged(MapRegion(center: place(), latitudeSpan: span, longitudeSpan: span * 1.5))])
        let pin = PinID(UInt64.random(in: 1...UInt64.max, using: &random))
        commit([.pinDropped(pin, place())])
        album(pin, requested: [])
        let removals = Int.random(in: 0...5, using: &random)
        for slot in state.pins[pin]!.album.slots.prefix(removals) {
            // As the app removes a photo: by its slot, and naming it (docs/DEVICES.md).
            commit([.photoRemoved(pin: pin, collection: state.pins[pin]!.album.collection, slot: slot.number, photo: slot.photo.identity)])
        }
        if Bool.random(using: &random) {
            let old = state.pins[pin]!.album.collection
            album(pin, requested: [.collectionReplaced(pin: pin, oldCollection: old, newCollection: old + 1)])
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            commit([.pinDragged(pin, place())])
            album(pin, requested: [])
        }
        if state.pins.count > livePins, let oldest = state.pins.values.min(by: { $0.droppedAt < $1.droppedAt }) {
            commit([.pinRemoved(oldest.id)])
        }
        return session
    }

    /// The state now, then after each session that takes the events to the next multiple of
    /// `interval` or past it, until at least `count` events, and at the end: points along the
    /// workload to compare states at (the tests of diffs).
    public mutating func states(every interval: Int, until count: Int) -> [TouristState] {
        precondition(interval > 0, "an interval of at least one event")
        var states = [state]
        var next = events + interval
        while events < count {
            _ = nextSession()
            guard events >= next else { continue }
            states.append(state)
            while next <= events { next += interval }
        }
        if states.last?.sequence != state.sequence { states.append(state) }
        return states
    }

    /// Sessions until at least `count` events; each commit goes to `body`.
    public mutating func produce(atLeast count: Int, _ body: ([DomainEvent]) throws -> Void) rethrows {
        while events < count {
            for commit in nextSession() { try body(commit) }
        }
    }

    private mutating func commit(_ commit: [DomainEvent]) {
        for event in commit {
            precondition(state.problem(with: event) == nil, "the workload broke a rule: \(event)")
            events += 1
            state.apply(RecordedEvent(
                sequence: state.sequence + 1, timestamp: LogTimestamp(microsecondsSinceEpoch: 0), cause: nil, event: event))
        }
        session.append(commit)
    }

    private mutating func place() -> Coordinate {
        Coordinate(latitude: Double.random(in: -60...70, using: &random), longitude: Double.random(in: -170...170, using: &random))
    }

    /// `requested` go in the same commit as the album request (New Collection's replacement).
    private mutating func album(_ pin: PinID, requested: [DomainEvent]) {
        var album = state.pins[pin]!.album
        if case .collectionReplaced(_, _, let new) = requested.last { album = Album(collection: new) }
        let place = state.pins[pin]!.coordinate
        commit(requested + [.albumRequested(AlbumRequest(
            pin: pin, collection: album.collection, page: UInt32.random(in: 1...16, using: &random), perPage: 250, place: place))])
        let count = Int.random(in: 20...250, using: &random)
        let photos = (0..<count).map { _ in listedPhoto() }
        commit([.photosListed(PhotoListing(pin: pin, collection: album.collection, page: 1, pages: 16, total: 4_000, photos: photos))])
        for slot in 0..<UInt32(count) {
            if Int.random(in: 0..<40, using: &random) == 0 {
                commit([.photoDownloadFailed(pin: pin, collection: album.collection, slot: slot, reason: "HTTP 404")])
            } else {
                let digest = PhotoDigest(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })!
                commit([.photoDownloaded(DownloadedPhoto(
                    pin: pin, collection: album.collection, slot: slot, digest: digest,
                    byteCount: UInt64.random(in: 3_000...40_000, using: &random), mediaType: "image/jpeg"))])
            }
        }
    }

    private mutating func listedPhoto() -> ListedPhoto {
        let id = String(50_000_000_000 + UInt64.random(in: 0..<9_000_000_000, using: &random))
        let secret = String(UInt64.random(in: 0...UInt64(UInt32.max), using: &random), radix: 16)
        let server = 65_535 - Int.random(in: 0..<8, using: &random)
        let title = (0..<Int.random(in: 0...4, using: &random)).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }
        return ListedPhoto(
            remoteID: id, url: "https://live.staticflickr.com/\(server)/\(id)_\(secret)_q.jpg",
            title: title.joined(separator: " "), width: 150, height: 150)
    }
}
