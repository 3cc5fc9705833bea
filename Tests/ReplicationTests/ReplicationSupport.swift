import EventLog
import Foundation
import NATSClient
import NATSTestSupport
import Replication
import VirtualTourist

/// A small JPEG-looking image: the store sniffs only its first bytes.
func photoBytes(_ seed: Int) -> [UInt8] {
    [0xFF, 0xD8, 0xFF, 0xE0] + Array("photo \(seed) ".utf8) + (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) } + [0xFF, 0xD9]
}

/// Adds `pins` pins with an album of `photos` downloaded photos each (`seed` keeps photos apart).
func addAlbums(_ store: TouristStore, pins: Int, photos: Int, seed: Int = 0) async throws {
    for index in 0..<pins {
        let pin = try await store.dropPin(at: Coordinate(latitude: Double(index % 80), longitude: Double(seed % 170)))
        let request = try await store.requestAlbum(for: pin, perPage: UInt32(photos))
        let listed = (0..<photos).map {
            ListedPhoto(remoteID: "r\(seed)-\(index)-\($0)", url: "https://photos.example/\(seed)/\(index)/\($0).jpg", title: "photo \($0)")
        }
        let listing = try await store.recordListing(
            PhotoListing(pin: pin, collection: 1, page: 1, pages: 1, total: UInt64(photos), photos: listed), cause: request.sequence)
        for slot in 0..<photos {
            let lease = try store.storePhoto(photoBytes(seed * 10_000 + index * 100 + slot))
            try await store.recordDownload(lease, pin: pin, collection: 1, slot: UInt32(slot), cause: listing.sequence)
        }
    }
}

/// Every event of a store's log, to compare two stores event for event.
func allEvents(_ folder: String) throws -> [LogEvent] {
    try LogReader(directory: folder + "/log", payloadCodec: EventCodec.blockCodec).events(from: 1).all()
}

extension LogCursor {
    /// Every event the cursor still gives.
    func all() throws -> [LogEvent] {
        var events: [LogEvent] = []
        while let event = try next() { events.append(event) }
        return events
    }
}

func head(_ folder: String) throws -> LogHead? {
    let reader = try LogReader(directory: folder + "/log", payloadCodec: EventCodec.blockCodec)
    return try reader.head(at: try reader.lastSequence())
}

/// The photos a store holds, by digest.
func storedPhotos(_ folder: String) -> Set<String> {
    let root = folder + "/blobs/sha256"
    let enumerator = FileManager.default.enumerator(atPath: root)
    var names: Set<String> = []
    while let path = enumerator?.nextObject() as? String {
        // `ab/cdef…`: the fan-out folder is the digest's first byte.
        let name = path.replacingOccurrences(of: "/", with: "")
        if name.count == 64, !path.hasSuffix(".tmp") { names.insert(name) }
    }
    return names
}

func storeOptions() -> StoreOptions {
    var options = StoreOptions()
    options.collectionInterval = nil
    return options
}

/// Ends a follower's and a replicator's tasks, then closes the replica, the original and the
/// connection.
func stop(
    _ following: Task<Void, any Error>, _ shipping: Task<Void, any Error>, follower: Follower, store: TouristStore,
    nats: NATSConnection
) async throws {
    following.cancel()
    shipping.cancel()
    _ = try? await following.value
    _ = try? await shipping.value
    try await follower.close()
    try await store.close()
    await nats.close()
}

/// A store at `folder` with `pins` albums of `photos` photos, shipped whole to the cluster in
/// messages of at most `maxBatchEvents` events (nil: the replicator's default); the store stays open.
func shippedStore(
    at folder: String, on servers: NATSTestServers, pins: Int, photos: Int, maxBatchEvents: Int? = 4
) async throws -> (store: TouristStore, nats: NATSConnection, replicator: Replicator, options: ReplicationOptions) {
    let store = try await TouristStore.open(at: folder, options: storeOptions())
    try await addAlbums(store, pins: pins, photos: photos)
    let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
    var options = ReplicationOptions()
    if let maxBatchEvents { options.maxBatchEvents = maxBatchEvents }
    let replicator = try await Replicator.start(store: folder, connection: nats, servers: servers.urls, options: options)
    try await replicator.shipAvailable()
    return (store, nats, replicator, options)
}
