import EventLog
import Foundation
import NATSClient
import NATSTestSupport
import Replication
import StorageTestSupport
import Testing
import VirtualTourist

extension ReplicationTests {
    /// A restore used to fetch only the photos the current state shows (538 of 610 in one
    /// store): those kept for time travel's retention window were missing in the copy, so time
    /// travel there showed as gone what the original still showed.
    @Test("a restore fetches the photos the original keeps for time travel, not only those its albums show")
    func aRestoreKeepsTheRetentionWindowsPhotos() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-kept-original")
            let copy = TemporaryFolder.uniquePath("replication-kept-copy")
            defer { for folder in [original, copy] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 3)
            let pin = try #require(store.state.pins.keys.first)
            let removed = try #require(store.state.pins[pin]!.album.slots[0].digest)
            let shownBefore = store.lastSequence
            try await store.removePhoto(0, from: pin)
            #expect(!store.state.referencedDigests.contains(removed))
            #expect(try store.keptPhotos().contains(removed), "the retention window keeps the removed photo")

            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            try await replicator.shipAvailable()
            try await store.close()
            let report = try await StreamRestore.restore(connection: nats, stream: replicator.stream, to: copy)
            #expect(report.photos == 3 && report.missingPhotos == 0)
            #expect(storedPhotos(copy) == storedPhotos(original))

            // Time travel on the copy shows the removed photo's image where the original does.
            let restored = try await TouristStore.open(at: copy, options: storeOptions())
            let before = try restored.state(at: shownBefore)
            #expect(before.pins[pin]?.album.slots[0].digest == removed)
            #expect(try restored.photoBytes(removed) != nil)
            try await restored.close()
            await nats.close()
        }
    }
}
