import BlobStore
import EventLog
import VirtualTourist

/// A seeded mix of everything a store does to its disk: pins dropped, dragged and removed,
/// albums listed and their photos stored and recorded, photos removed, New Collection,
/// snapshots written and blobs collected. Each step looks at the store's state and picks an
/// action the rules accept, so it can resume on any store, including one reopened after a
/// crash.
public struct MixedWorkload {
    private var random: UInt64
    /// How many steps the rules refused (a concurrent change can make a chosen action stale).
    public private(set) var refusals = 0
    /// Every event an action returned, in order: the store acknowledged each. A step that
    /// fails part-way leaves the events acknowledged before the failure here.
    public var acknowledged: [RecordedEvent] = []

    /// Past this many pins a drop becomes a removal: a person keeps a few dozen, and a state of
    /// that size keeps steps and snapshots from growing with the length of a run.
    static let pinLimit = 24

    public init(seed: UInt64) { random = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    /// What one step did.
    public enum Step: Sendable {
        /// Events appended (also added to ``acknowledged``).
        case appended([RecordedEvent])
        case snapshot(UInt64)
        case collected(Int)
        /// The hot tail sealed and compacted into blocks: how many events went into blocks.
        case compacted(UInt64)
        case refused(String)
    }

    mutating func next(_ bound: Int) -> Int {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return Int(random % UInt64(bound))
    }

    mutating func place() -> Coordinate {
        Coordinate(latitude: Double(next(17_000)) / 100 - 85, longitude: Double(next(35_800)) / 100 - 179)
    }

    /// A small JPEG-signed image, different every time.
    mutating func photo() -> [UInt8] {
        let count = 64 + next(900)
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
        for _ in 0..<count { bytes.append(UInt8(truncatingIfNeeded: next(256))) }
        return bytes
    }

    /// Runs one action; rule refusals come back as `.refused`, any other failure is thrown.
    public mutating func step(_ store: TouristStore) async throws -> Step {
        do {
            return try await act(store)
        } catch let error as DomainError where error.code != .storage && error.code != .closed {
            refusals += 1
            return .refused(error.message)
        }
    }

    private mutating func act(_ store: TouristStore) async throws -> Step {
        let step = try await choose(store)
        // Downloads acknowledge each event as it returns; sequences only grow.
        if case .appended(let events) = step {
            acknowledged += events.filter { $0.sequence > (acknowledged.last?.sequence ?? 0) }
        }
        return step
    }

    private mutating func choose(_ store: TouristStore) async throws -> Step {
        let state = store.state
        let pins = state.pinsInDropOrder
        let roll = next(100)
        if pins.isEmpty || (roll < 14 && pins.count < Self.pinLimit) {
            let id = PinID(UInt64(next(Int.max)) | 1)
            return .appended([try await store.record(.pinDropped(id, place()))])
        }
        let pin = pins[next(pins.count)]
        switch roll {
        case ..<14:
            return .appended([try await store.removePin(pin.id)])
        case ..<18:
            let region = MapRegion(center: place(), latitudeSpan: 1 + Double(next(40)), longitudeSpan: 1 + Double(next(80)))
            return .appended([try await store.changeRegion(to: region)])
        case ..<22:
            return .appended([try await store.dragPin(pin.id, to: place())])
        case ..<62:
            return try await albumWork(store, pin)
        case ..<72:
            let downloaded = pin.album.slots.filter { $0.digest != nil }
            guard !downloaded.isEmpty else { return try await albumWork(store, pin) }
            let slot = downloaded[next(downloaded.count)].number
            return .appended([try await store.removePhoto(slot, from: pin.id)])
        case ..<78 where pins.count > 3:
            return .appended([try await store.removePin(pin.id)])
        case ..<84:
            return .snapshot(try await store.writeSnapshot())
        case ..<88:
            return .compacted(try store.compactLog().events)
        default:
            return .collected(try store.collectGarbage(grace: .zero).collected.count)
        }
    }

    /// The next thing the pin's album needs: a request, a listing, downloads, or New Collection.
    private mutating func albumWork(_ store: TouristStore, _ pin: Pin) async throws -> Step {
        let album = pin.album
        let collection = album.collection
        switch album.status {
        case .notRequested:
            return .appended([try await store.requestAlbum(for: pin.id, perPage: UInt32(3 + next(6)))])
        case .listing:
            let count = next(8)
            let photos = (0..<count).map { index in
                ListedPhoto(
                    remoteID: "r\(next(1_000_000))", url: "https://photos.example/\(next(1_000_000))-\(index).jpg",
                    title: "photo \(index)", width: 150, height: 100)
            }
            let listing = PhotoListing(
                pin: pin.id, collection: collection, page: album.request?.page ?? 1, pages: 3, total: UInt64(count) * 3,
                photos: photos)
            return .appended([try await store.recordListing(listing, cause: album.requestedAt)])
        case .downloading:
            var events: [RecordedEvent] = []
            for slot in album.slots where !slot.isResolved && events.count < 3 {
                if next(12) == 0 {
                    events.append(
                        try await store.recordDownloadFailure(
                            pin: pin.id, collection: collection, slot: slot.number, reason: "HTTP 404", cause: album.listedAt))
                } else {
                    let lease = try store.storePhoto(photo())
                    events.append(
                        try await store.recordDownload(
                            lease, pin: pin.id, collection: collection, slot: slot.number, cause: album.listedAt))
                }
                acknowledged.append(events[events.count - 1])
            }
            return .appended(events)
        case .complete, .noImages, .failed:
            return .appended(try await store.replaceCollection(of: pin.id, page: UInt32(1 + next(3)), perPage: UInt32(3 + next(6))))
        }
    }
}

/// Options for crash testing: every append durable, small segments (so rolls happen), a
/// snapshot every 16 events, no retention or grace (so collection has work), no background
/// collection (so every I/O comes from a step).
public func crashTestOptions() -> StoreOptions {
    var options = StoreOptions()
    options.log.durability = .always
    options.log.segmentSize = 8 << 10
    // Format 2: small hot-tail segments and blocks, compacted by the workload's own steps (not a
    // background thread), so every run does the same I/O and a cut can land in any compaction.
    options.log.hotTailSegmentSize = 8 << 10
    options.log.blockSize = 2 << 10
    options.log.compactsInBackground = false
    options.log.preallocationSize = 4 << 10
    // Tail checkpoints while running, several a segment, so a cut can land in any of them too.
    options.log.tailCheckpointInterval = 1 << 10
    options.snapshotInterval = 16
    options.retention = .zero
    options.blobs.grace = .zero
    options.collectionInterval = nil
    return options
}

/// A short, stable text naming one recorded event exactly (its sequence, time, cause and
/// content), for a process to report what the store acknowledged.
public func fingerprint(_ event: RecordedEvent) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in "\(event)".utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01B3
    }
    return String(hash, radix: 16)
}
