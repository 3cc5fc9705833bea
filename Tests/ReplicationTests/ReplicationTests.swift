import EventLog
import Foundation
import NATSClient
import NATSTestSupport
import Replication
import StorageTestSupport
import Testing
import VirtualTourist

@Suite("Replication against a three-server cluster", .serialized)
struct ReplicationTests {
    @Test("a replicated store restores event for event and photo for photo, with the same head")
    func restoreIsEqual() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let copy = TemporaryFolder.uniquePath("replication-copy")
            let early = TemporaryFolder.uniquePath("replication-early")
            defer { for folder in [original, copy, early] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 4, photos: 6)
            let middle = store.lastSequence
            try await addAlbums(store, pins: 3, photos: 5, seed: 1)
            try await store.close()

            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            var options = ReplicationOptions()
            options.maxBatchEvents = 7  // several messages, and a restore point inside one
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            let status = try await replicator.shipAvailable()
            #expect(status.acknowledgedEvents == status.localEvents)
            #expect(status.lagEvents == 0)
            #expect(status.photosUploaded == 39)

            let report = try await StreamRestore.restore(connection: nats, stream: replicator.stream, to: copy)
            #expect(report.events == status.localEvents)
            #expect(try allEvents(copy) == allEvents(original))
            #expect(try head(copy) == head(original))
            #expect(storedPhotos(copy) == storedPhotos(original))
            #expect(storedPhotos(copy).count == 39)
            let reopened = try await TouristStore.open(at: copy, options: storeOptions())
            let originalState = try await TouristStore.open(at: original, options: storeOptions())
            #expect(reopened.state == originalState.state)
            try await reopened.close()
            try await originalState.close()

            // A point in the past: the same head as the original had there.
            let point = try await StreamRestore.restore(connection: nats, stream: replicator.stream, to: early, at: .sequence(middle))
            #expect(point.events == middle)
            #expect(try head(early) == LogReader(directory: original + "/log", payloadCodec: EventCodec.blockCodec).head(at: middle))
            #expect(storedPhotos(early).count == 24)
            await nats.close()
        }
    }

    @Test("a second writer from a copy of the store is fenced off and nothing is overwritten")
    func secondWriterIsFenced() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let twin = TemporaryFolder.uniquePath("replication-twin")
            defer { for folder in [original, twin] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 2, photos: 2)
            try await store.close()
            try FileManager.default.copyItem(atPath: original, toPath: twin)

            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            // Both stores go on with different events; the original replicates first.
            for (folder, seed) in [(original, 1), (twin, 2)] {
                let store = try await TouristStore.open(at: folder, options: storeOptions())
                try await addAlbums(store, pins: 1, photos: 1, seed: seed)
                try await store.close()
            }
            let first = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            let shipped = try await first.shipAvailable()
            let streamBefore = try await JetStream(nats).streamInfo(first.stream.name).state

            await #expect(throws: ReplicationError.self) {
                let second = try await Replicator.start(store: twin, connection: nats, servers: servers.urls)
                try await second.shipAvailable()
            }
            #expect(try await JetStream(nats).streamInfo(first.stream.name).state == streamBefore)
            // The original goes on as before.
            let later = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(later, pins: 1, photos: 1, seed: 3)
            try await later.close()
            let again = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            #expect(try await again.shipAvailable().acknowledgedEvents > shipped.acknowledgedEvents)
            await nats.close()
        }
    }

    @Test("a store of several devices is refused before anything is made on the cluster")
    func severalDevicesAreRefused() async throws {
        try await withNATSServers(count: 1) { servers in
            let phone = TemporaryFolder.uniquePath("replication-phone")
            let laptop = TemporaryFolder.uniquePath("replication-laptop")
            defer { for folder in [phone, laptop] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 1)
            try await store.close()
            _ = try StoreSync.clone(from: phone, to: laptop, name: "laptop", options: storeOptions())
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            // The laptop knows the phone from the start; the phone once a sync gave it the laptop.
            _ = try StoreSync.sync(store: laptop, with: phone)
            for folder in [laptop, phone] {
                do {
                    _ = try await Replicator.start(store: folder, connection: nats, servers: servers.urls)
                    Issue.record("\(folder): replicated")
                } catch let error as ReplicationError {
                    #expect(error.description.contains("is one of several devices of its map"), "\(error)")
                }
                let streamName = try ReplicationStream(for: #require(try LogReader(directory: folder + "/log").identity())).name
                await #expect(throws: (any Error).self, "no stream was made") { try await JetStream(nats).streamInfo(streamName) }
            }
            await nats.close()
        }
    }

    @Test("a follower shows the original's albums live and refuses changes")
    func followerFollows() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let replica = TemporaryFolder.uniquePath("replication-replica")
            defer { for folder in [original, replica] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 2, photos: 3)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            let shipping = Task { try await replicator.run() }
            #expect(await eventually { replicator.status.lagEvents == 0 && replicator.status.acknowledgedEvents == store.lastSequence })

            let follower = try await Follower.start(
                connection: nats, stream: replicator.stream, folder: replica, servers: servers.urls, storeOptions: storeOptions())
            let following = Task { try await follower.run() }
            try await addAlbums(store, pins: 2, photos: 2, seed: 5)
            let target = store.lastSequence
            #expect(await eventually { follower.store.lastSequence == target })
            #expect(follower.store.state == store.state)
            #expect(try follower.store.head(at: target) == store.head(at: target))
            #expect(storedPhotos(replica) == storedPhotos(original))
            let refused = await #expect(throws: DomainError.self) {
                _ = try await follower.store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
            }
            #expect(refused?.code == .readOnly)

            try await stop(following, shipping, follower: follower, store: store, nats: nats)
        }
    }

    @Test("a place forgotten after it was shipped is erased on a follower, live, in the stream, its bucket and a restore; the chain unchanged")
    func forgettingReachesReplicas() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let replica = TemporaryFolder.uniquePath("replication-replica")
            let copy = TemporaryFolder.uniquePath("replication-copy")
            defer { for folder in [original, replica, copy] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 3, photos: 2)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            var options = ReplicationOptions()
            options.maxBatchEvents = 5  // several messages to rewrite
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            let shipping = Task { try await replicator.run() }
            #expect(await eventually { replicator.status.acknowledgedEvents == store.lastSequence })
            let follower = try await Follower.start(
                connection: nats, stream: replicator.stream, folder: replica, servers: servers.urls, storeOptions: storeOptions())
            let following = Task { try await follower.run() }
            let photosBefore = storedPhotos(replica)
            let streamBefore = try await JetStream(nats).streamInfo(replicator.stream.name).state

            let pin = try #require(store.state.pins.keys.sorted().first)
            let forgotten = try await store.forget(pin)
            #expect(forgotten.erasedEvents > 0)
            let gonePhotos = photosBefore.subtracting(storedPhotos(original))
            #expect(gonePhotos.count == 2, "the place's two photos")
            // The follower's count moves once the batch is in and its erasure done.
            #expect(await eventually(timeout: .seconds(60)) { follower.status.events == store.lastSequence })
            // Event for event equal, the erased ones erased alike; the chain the same.
            let erased = try allEvents(replica).filter(\.isErased)
            #expect(erased.count == Int(forgotten.erasedEvents))
            #expect(try allEvents(replica) == allEvents(original))
            #expect(try follower.store.head(at: store.lastSequence) == store.head(at: store.lastSequence))
            #expect(follower.store.state == store.state)
            #expect(follower.store.state.pins[pin] == nil)
            #expect(storedPhotos(replica) == storedPhotos(original))

            // Once the forget is acknowledged the stream is rewritten: the place erased there too,
            // with the same messages, sequence numbers and heads; its photos out of the bucket.
            #expect(await eventually(timeout: .seconds(60)) { replicator.lastRewrite != nil && replicator.status.rewrite == nil })
            let rewrite = try #require(replicator.lastRewrite)
            #expect(rewrite.changedMessages > 0 && rewrite.photosDeleted == 2)
            #expect(try await shippedEvents(nats, stream: replicator.stream.name) == allEvents(original))
            let streamAfter = try await JetStream(nats).streamInfo(replicator.stream.name)
            #expect(streamAfter.state.messages == streamBefore.messages + 1, "the same messages, and the forget's")
            #expect(streamAfter.config.denyDelete && streamAfter.config.denyPurge)
            await #expect(throws: JetStreamAPIError.self, "the safety copy is gone") {
                try await JetStream(nats).streamInfo(replicator.stream.safetyCopy.name)
            }
            let bucket = try await ObjectStore.createOrLookUp(JetStream(nats), bucket: replicator.stream.bucket)
            for name in gonePhotos { #expect(try await bucket.exists(name) == false) }
            for name in storedPhotos(original) { #expect(try await bucket.exists(name)) }
            #expect(replicator.status.photosUploaded == photosBefore.count - 2)

            // The follower lost its consumer with the old stream: it looks when a fetch comes back
            // empty, says why, and makes one on the new stream (the bound is on a hang only).
            #expect(await eventually(timeout: .seconds(60)) { follower.status.lastError?.contains("made again") == true })
            try await addAlbums(store, pins: 1, photos: 2, seed: 9)
            #expect(await eventually(timeout: .seconds(60)) { follower.status.events == store.lastSequence })
            #expect(follower.store.state == store.state)
            #expect(try allEvents(replica) == allEvents(original))

            #expect(await eventually { replicator.status.acknowledgedEvents == store.lastSequence })
            let report = try await StreamRestore.restore(connection: nats, stream: replicator.stream, to: copy)
            #expect(report.missingPhotos == 0)
            #expect(try allEvents(copy) == allEvents(original))
            #expect(try head(copy) == head(original))
            #expect(storedPhotos(copy) == storedPhotos(original))

            try await stop(following, shipping, follower: follower, store: store, nats: nats)
        }
    }

    @Test("a place forgotten before it was shipped reaches a live follower erased, with the chain unchanged")
    func forgottenBeforeShippingReachesAFollower() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let replica = TemporaryFolder.uniquePath("replication-replica")
            defer { for folder in [original, replica] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 2, photos: 2)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            try await replicator.shipAvailable()
            let follower = try await Follower.start(
                connection: nats, stream: replicator.stream, folder: replica, servers: servers.urls, storeOptions: storeOptions())
            let following = Task { try await follower.run() }

            // Two more places; one is forgotten before any of its events leaves the original.
            let pinsBefore = Set(store.state.pins.keys)
            try await addAlbums(store, pins: 2, photos: 3, seed: 7)
            let pin = try #require(Set(store.state.pins.keys).subtracting(pinsBefore).sorted().first)
            let forgotten = try await store.forget(pin)
            try await replicator.shipAvailable()

            #expect(await eventually(timeout: .seconds(60)) { follower.status.events == store.lastSequence })
            #expect(follower.status.lastError == nil)
            let erased = try allEvents(replica).filter(\.isErased)
            #expect(erased.count == Int(forgotten.erasedEvents))
            #expect(try allEvents(replica) == allEvents(original))
            #expect(try follower.store.head(at: store.lastSequence) == store.head(at: store.lastSequence))
            #expect(follower.store.state == store.state)
            #expect(storedPhotos(replica) == storedPhotos(original), "the place's photos were never fetched")
            // The replicator's cursor stood in the hot tail, whose old bytes still hold the place
            // whole: the stream must have the events as the log holds them now, erased.
            #expect(try await shippedEvents(nats, stream: replicator.stream.name) == allEvents(original))
            // Nothing of the place had left, so the stream was compared and kept as it was.
            #expect(replicator.lastRewrite?.changedMessages == 0)
            #expect(replicator.lastRewrite?.photosDeleted == 0)

            try await stop(following, Task {}, follower: follower, store: store, nats: nats)
        }
    }

    @Test("while a place is being forgotten the replicator ships nothing, says why, and goes on after")
    func aForgetUnderWayHoldsShippingBack() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 2)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            try await replicator.shipAvailable()
            let shipped = replicator.acknowledgedEvents

            // What a forget leaves while it runs (or a crash left): its plan in the store folder.
            let marker = original + "/forget.pending"
            #expect(FileManager.default.createFile(atPath: marker, contents: Data("plan".utf8)))
            try await addAlbums(store, pins: 1, photos: 2, seed: 3)
            let shipping = Task { try await replicator.run() }
            #expect(await eventually { replicator.status.lastError?.contains("being forgotten") == true })
            #expect(replicator.acknowledgedEvents == shipped)

            try FileManager.default.removeItem(atPath: marker)
            #expect(await eventually { replicator.acknowledgedEvents == store.lastSequence })
            #expect(try await shippedEvents(nats, stream: replicator.stream.name) == allEvents(original))
            shipping.cancel()
            _ = try? await shipping.value
            try await store.close()
            await nats.close()
        }
    }
}

/// Every event the stream holds, as it was shipped.
func shippedEvents(_ nats: NATSConnection, stream: String) async throws -> [LogEvent] {
    let jetStream = JetStream(nats)
    let last = try await jetStream.streamInfo(stream).state.lastSequence
    var events: [LogEvent] = []
    for sequence in 1...max(1, last) where last > 0 {
        let message = try await jetStream.message(stream: stream, sequence: sequence)
        events += try ReplicationBatch(decoding: message.payload, where: "message \(sequence)").events
    }
    return events
}
