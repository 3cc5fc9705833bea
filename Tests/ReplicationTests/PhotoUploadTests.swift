import EventLog
import FileIO
import Foundation
import NATSClient
import NATSTestSupport
@testable import Replication
import StorageTestSupport
import Testing
import VirtualTourist

/// A photo reaches the bucket once: a replicator that trusts its list of uploads puts a new photo
/// without asking the bucket first, and asks when the list cannot be trusted.
@Suite("Photo uploads against a real nats-server", .serialized)
struct PhotoUploadTests {
    @Test("a photo named again is not uploaded again, with the list of uploads or after it was lost")
    func eachPhotoOnce() async throws {
        try await withNATSServers(count: 1) { servers in
            let folder = TemporaryFolder.uniquePath("replication-photos-once")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let store = try await TouristStore.open(at: folder, options: storeOptions())
            try await addAlbums(store, pins: 2, photos: 3)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let jetStream = JetStream(nats)

            // Small messages: after the first (whose photos it asks about, as after a crash) a
            // replicator puts photos without asking.
            var options = ReplicationOptions()
            options.maxBatchEvents = 2
            func ship() async throws -> (status: ReplicationStatus, messages: UInt64) {
                let replicator = try await Replicator.start(store: folder, connection: nats, servers: servers.urls, options: options)
                let status = try await replicator.shipAvailable()
                // The status read from the log and the one told the store's last event agree;
                // told of events it has not seen, it counts them as lag.
                #expect(replicator.status == replicator.status(localEvents: store.lastSequence))
                #expect(status.localEvents == store.lastSequence)
                #expect(replicator.status(localEvents: store.lastSequence + 3).lagEvents == 3)
                let bucket = try await jetStream.streamInfo("OBJ_" + replicator.stream.bucket)
                return (status, bucket.state.messages)
            }
            let first = try await ship()
            #expect(first.status.photosUploaded == 6)
            #expect(first.messages == 12)  // a chunk and a description each

            // The same images again in a new album (seed 0 again), then new ones: the list knows
            // the old ones; the new ones go in without a question, a chunk and a description each.
            try await addAlbums(store, pins: 1, photos: 3)
            try await addAlbums(store, pins: 1, photos: 2, seed: 7)
            let second = try await ship()
            #expect(second.status.photosUploaded == 8)
            #expect(second.messages == 16)

            // A record whose count lags the list (a kill between an upload's line and the
            // record's next write): the list, which is what the bucket has, gives the count.
            let streamName = try #require(try FileManager.default.contentsOfDirectory(atPath: ReplicationRecord.folder(ofStore: folder))
                .first { $0.hasSuffix(".photos") }).replacingOccurrences(of: ".photos", with: "")
            var lagging = try #require(try ReplicationRecord.load(store: folder, stream: streamName))
            lagging.photosUploaded = 5
            try lagging.save(store: folder, fileSystem: PosixFileSystem())
            options.stream = streamName
            #expect(try await Replicator.start(store: folder, connection: nats, servers: servers.urls, options: options).status.photosUploaded == 8)

            // The list lost: the replicator cannot know what the bucket has, so it asks.
            let list = try #require(try FileManager.default.contentsOfDirectory(atPath: ReplicationRecord.folder(ofStore: folder))
                .first { $0.hasSuffix(".photos") })
            try FileManager.default.removeItem(atPath: ReplicationRecord.folder(ofStore: folder) + "/" + list)
            try await addAlbums(store, pins: 1, photos: 3)
            try await addAlbums(store, pins: 1, photos: 2, seed: 7)
            let third = try await ship()
            #expect(third.status.acknowledgedEvents == third.status.localEvents)
            #expect(third.messages == 16)

            let copy = TemporaryFolder.uniquePath("replication-photos-once-copy")
            defer { try? FileManager.default.removeItem(atPath: copy) }
            let identity = try #require(try LogReader(directory: folder + "/log", payloadCodec: EventCodec.blockCodec).identity())
            _ = try await StreamRestore.restore(connection: nats, stream: ReplicationStream(for: identity), to: copy)
            #expect(storedPhotos(copy) == storedPhotos(folder))
            try await store.close()
            await nats.close()
        }
    }
}

@Suite("How many photos a batch uploads at once")
struct UploadsAtOnceTests {
    @Test("a live batch's few photos go up a few at a time; a backlog's as many at once as allowed")
    func fewForFewManyForMany() {
        // The app committing: a batch of 50 ms names a handful to a few dozen new photos.
        #expect(Replicator.uploadsAtOnce(photos: 1, limit: 32) == 4)
        #expect(Replicator.uploadsAtOnce(photos: 32, limit: 32) == 4)
        #expect(Replicator.uploadsAtOnce(photos: 45, limit: 32) == 6)
        // A backlog: a full message names thousands.
        #expect(Replicator.uploadsAtOnce(photos: 3_700, limit: 32) == 32)
        #expect(Replicator.uploadsAtOnce(photos: 256, limit: 32) == 32)
        // The option stays the ceiling, and a ceiling below one still uploads.
        #expect(Replicator.uploadsAtOnce(photos: 3_700, limit: 2) == 2)
        #expect(Replicator.uploadsAtOnce(photos: 3_700, limit: 0) == 1)
        // More photos never upload fewer at once.
        let counts = (0...600).map { Replicator.uploadsAtOnce(photos: $0, limit: 32) }
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 <= $1 })
    }
}
