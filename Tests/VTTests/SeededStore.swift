import BlobStore
@testable import EventLog
import Foundation
import LegacyLogWriter
import StorageTestSupport
import Synchronization
import VirtualTourist

/// A small store with known ids and times, built through the library, for the command tests:
///
/// | seq | time (UTC, 2026-11-21) | event |
/// | --- | --- | --- |
/// | 1 | 09:00:01 | RegionChanged 48, 2, span 10 × 20 |
/// | 2 | 09:00:02 | PinDropped A 1111…01 at 48.8584, 2.2945 |
/// | 3 | 09:00:03 | PinDropped B 2222…02 at 35.0116, 135.7681 |
/// | 4 | 09:00:04 | PinDropped C 1111…03 at -33.8568, 151.2153 |
/// | 5 | 09:00:05 | AlbumRequested A, collection 1, 3 a page |
/// | 6 | 09:00:06 | PhotosListed A: photos 5001, 5002, 5003 (cause 5) |
/// | 7, 8 | 09:00:07, 08 | PhotoDownloaded A slots 0, 1 (cause 6) |
/// | 9 | 09:00:09 | PhotoDownloadFailed A slot 2 (cause 6) |
/// | 10 | 09:00:10 | PhotoRemoved A slot 1 |
/// | 11 | 09:00:11 | PinDragged C to -34, 151 (its album was never requested: still collection 1) |
/// | 12 | 09:00:12 | PinRemoved B |
struct SeededStore {
    static let pinA = PinID(0x1111_0000_0000_0001)
    static let pinB = PinID(0x2222_0000_0000_0002)
    static let pinC = PinID(0x1111_0000_0000_0003)
    static let start: Int64 = 1_795_251_600_000_000
    static let photoBytes: [[UInt8]] = [png(1), png(2)]

    let folder: String

    /// Bytes the blob store takes as a PNG.
    static func png(_ seed: UInt8) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("seeded photo \(seed)".utf8)
    }

    static func make(label: String = "cli", format: LogFormatVersion = .v2) async throws -> SeededStore {
        let folder = TemporaryFolder.uniquePath(label)
        var options = StoreOptions()
        options.log.writesFormatOne = format == .v1
        options.collectionInterval = nil
        options.log.clock = TestClock(start, stepPerReading: 1_000_000)
        options.pinIDs = FixedPinIDs([pinA, pinB, pinC])
        let store = try await TouristStore.open(at: folder, options: options)
        try await store.changeRegion(to: MapRegion(center: Coordinate(latitude: 48, longitude: 2), latitudeSpan: 10, longitudeSpan: 20))
        _ = try await store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
        _ = try await store.dropPin(at: Coordinate(latitude: 35.0116, longitude: 135.7681))
        _ = try await store.dropPin(at: Coordinate(latitude: -33.8568, longitude: 151.2153))
        let request = try await store.requestAlbum(for: pinA, perPage: 3)
        let photos = (1...3).map {
            ListedPhoto(remoteID: "500\($0)", url: "http://127.0.0.1:9/\($0).png", title: "Photo \($0)", width: 75, height: 75)
        }
        let listing = try await store.recordListing(
            PhotoListing(pin: pinA, collection: 1, page: 1, pages: 1, total: 3, photos: photos), cause: request.sequence)
        for (slot, bytes) in photoBytes.enumerated() {
            let lease = try store.storePhoto(bytes)
            try await store.recordDownload(lease, pin: pinA, collection: 1, slot: UInt32(slot), cause: listing.sequence)
            lease.release()
        }
        try await store.recordDownloadFailure(pin: pinA, collection: 1, slot: 2, reason: "HTTP 404", cause: listing.sequence)
        try await store.removePhoto(1, from: pinA)
        try await store.dragPin(pinC, to: Coordinate(latitude: -34, longitude: 151))
        try await store.removePin(pinB)
        try await store.close()
        return SeededStore(folder: folder)
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }

    /// Every file under the store with its bytes (the lock file aside): to show a command
    /// changed nothing.
    func files() throws -> [String: [UInt8]] { try snapshotFiles(folder) }
}

/// The given ids, in order.
final class FixedPinIDs: PinIDGenerator, @unchecked Sendable {
    private let ids: Mutex<[PinID]>
    init(_ ids: [PinID]) { self.ids = Mutex(ids) }
    func next() -> PinID { ids.withLock { $0.isEmpty ? PinID(UInt64.random(in: 1...UInt64.max)) : $0.removeFirst() } }
}
