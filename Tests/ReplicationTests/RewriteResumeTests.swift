import EventLog
import Foundation
import NATSClient
import NATSTestSupport
@testable import Replication
import StorageTestSupport
import Testing
import VirtualTourist

extension ReplicationTests {
    /// What a crash in the middle of a rewrite leaves: the safety copy whole, the stream deleted,
    /// the record at `replace`.
    struct CrashedHere: Error {}

    /// Runs `replicator`'s rewrite of its stream from the compare, recording each step as the
    /// replicator does, and stops it as the replace begins: the safety copy whole, the stream
    /// not yet deleted.
    func rewriteStoppedAtReplace(_ replicator: Replicator, store: String, jetStream: JetStream) async throws {
        let stream = replicator.stream
        let rewrite = StreamRewrite(jetStream: jetStream, stream: stream, identity: replicator.identity, logDirectory: store + "/log") {
            step in
            var record = try ReplicationRecord.load(store: store, stream: stream.name)!
            record.rewrite = step
            try record.save(store: store, fileSystem: replicator.fileSystem)
            if step == .replace { throw CrashedHere() }
        }
        await #expect(throws: CrashedHere.self) { try await rewrite.run(from: .compare, deletingUnnamed: [], photoBucket: replicator.bucket) }
    }

    @Test("a rewrite stopped after the stream was deleted goes on from the safety copy when the replicator starts again")
    func aRewriteStoppedPartWayGoesOn() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let copy = TemporaryFolder.uniquePath("replication-copy")
            let early = TemporaryFolder.uniquePath("replication-early")
            defer { for folder in [original, copy, early] { try? FileManager.default.removeItem(atPath: folder) } }
            let (store, nats, first, options) = try await shippedStore(at: original, on: servers, pins: 3, photos: 2)
            let jetStream = JetStream(nats)
            let messages = try await jetStream.streamInfo(first.stream.name).state.messages
            let shippedBefore = first.acknowledgedEvents
            let photosBefore = storedPhotos(original)
            let pin = try #require(store.state.pins.keys.sorted().first)
            try await store.forget(pin)
            let gone = photosBefore.subtracting(storedPhotos(original))
            #expect(gone.count == 2)

            try await rewriteStoppedAtReplace(first, store: original, jetStream: jetStream)
            let safety = try await jetStream.streamInfo(first.stream.safetyCopy.name)
            #expect(safety.state.messages == messages)
            #expect(safety.config.replicas == 3)
            try await jetStream.deleteStream(first.stream.name)

            // A restore from the safety copy meanwhile: the events as the log holds them now,
            // the photos from the stream's bucket.
            let fromCopy = try await StreamRestore.restore(connection: nats, stream: first.stream.safetyCopy, to: early)
            #expect(fromCopy.events == shippedBefore)
            #expect(fromCopy.missingPhotos == 0)
            #expect(try allEvents(early) == Array(allEvents(original).prefix(Int(shippedBefore))))

            // One of the place's photos lost its line in the uploaded list (a crash right after
            // its upload): the bucket's own list still names it.
            let list = ReplicationRecord.photosPath(store: original, stream: first.stream.name)
            let lines = try String(contentsOfFile: list, encoding: .utf8).split(separator: "\n").map(String.init)
            let unlisted = try #require(gone.sorted().first)
            #expect(lines.contains(unlisted))
            try lines.filter { $0 != unlisted }.map { $0 + "\n" }.joined().write(toFile: list, atomically: true, encoding: .utf8)

            // The record lags the stream (it is written at most once a second): it names the
            // first message only. Where shipping stands comes from the safety copy.
            var record = try #require(try ReplicationRecord.load(store: original, stream: first.stream.name))
            let firstMessage = try await jetStream.message(stream: first.stream.safetyCopy.name, sequence: 1)
            let firstSummary = try BatchHeader.read(firstMessage.headers, where: "message 1")
            record.acknowledgedEvent = firstSummary.last
            record.streamSequence = 1
            record.head = firstSummary.head.description
            try record.save(store: original, fileSystem: first.fileSystem)

            let second = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            #expect(second.status.rewrite == .replace)
            #expect(second.acknowledgedEvents == shippedBefore, "from the safety copy, not from the stream being replaced")
            try await second.shipAvailable()
            #expect(second.status.rewrite == nil)
            #expect(second.acknowledgedEvents == store.lastSequence)
            #expect(try await shippedEvents(nats, stream: first.stream.name) == allEvents(original))
            #expect(try await jetStream.streamInfo(first.stream.name).state.messages > messages)
            await #expect(throws: JetStreamAPIError.self) { try await jetStream.streamInfo(first.stream.safetyCopy.name) }
            #expect(try ReplicationRecord.load(store: original, stream: first.stream.name)?.rewrite == nil)
            let bucket = try await ObjectStore.createOrLookUp(jetStream, bucket: first.stream.bucket)
            #expect(Set(try await bucket.names()) == storedPhotos(original), "the place's photos are gone, listed or not")
            #expect(!ReplicationRecord.loadPhotos(store: original, stream: first.stream.name).contains(where: gone.contains))

            let report = try await StreamRestore.restore(connection: nats, stream: first.stream, to: copy)
            #expect(try allEvents(copy) == allEvents(original))
            #expect(try head(copy) == head(original))
            #expect(storedPhotos(copy) == storedPhotos(original))
            #expect(report.missingPhotos == 0)
            try await store.close()
            await nats.close()
        }
    }

    @Test("a rewrite does not delete a stream that another writer appended to after the safety copy was taken")
    func aRewriteStopsForASecondWriter() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let (store, nats, replicator, _) = try await shippedStore(at: original, on: servers, pins: 2, photos: 1, maxBatchEvents: nil)
            let jetStream = JetStream(nats)
            try await store.forget(try #require(store.state.pins.keys.sorted().first))
            let name = replicator.stream.name

            let rewrite = StreamRewrite(jetStream: jetStream, stream: replicator.stream, identity: replicator.identity, logDirectory: original + "/log") {
                step in
                guard step == .replace else { return }
                // Another writer's message lands once the copy is taken: here, the last one again.
                let last = try await jetStream.streamInfo(name).state.lastSequence
                let message = try await jetStream.message(stream: name, sequence: last)
                _ = try await jetStream.publish(replicator.stream.subject, payload: message.payload, messageID: "other", expectedLastSequence: last, headers: message.headers)
            }
            let error = await #expect(throws: ReplicationError.self) {
                try await rewrite.run(from: .compare, deletingUnnamed: [], photoBucket: replicator.bucket)
            }
            guard case .conflict(let text) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(text.contains("another writer appended while it was being rewritten"), "\(text)")
            let info = try await jetStream.streamInfo(name)
            let copy = try await jetStream.streamInfo(replicator.stream.safetyCopy.name)
            #expect(info.state.messages == copy.state.messages + 1, "the stream was not deleted")
            try await store.close()
            await nats.close()
        }
    }

    @Test("one replicator ships a store to a stream at a time, across replicator instances as across processes")
    func oneShipperAtATime() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 1)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let running = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            let shipping = Task { try await running.run() }
            #expect(await eventually { running.acknowledgedEvents == store.lastSequence })
            let other = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            let error = await #expect(throws: ReplicationError.self) { try await other.shipAvailable() }
            guard case .invalid(let text) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(text.contains("another replicator"), "\(text)")
            shipping.cancel()
            _ = try? await shipping.value
            try await addAlbums(store, pins: 1, photos: 1, seed: 4)
            #expect(try await other.shipAvailable().acknowledgedEvents == store.lastSequence, "free once the first stopped")
            try await store.close()
            await nats.close()
        }
    }

    @Test("a replicator stopped while replacing the stream, whose safety copy is gone, says so and what to do")
    func aLostSafetyCopyIsNamed() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let (store, nats, first, _) = try await shippedStore(at: original, on: servers, pins: 1, photos: 1, maxBatchEvents: nil)
            try await store.close()
            var record = try #require(try ReplicationRecord.load(store: original, stream: first.stream.name))
            record.rewrite = .replace
            try record.save(store: original, fileSystem: first.fileSystem)
            let error = await #expect(throws: ReplicationError.self) {
                try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            }
            guard case .storage(let text) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(text.contains("\(first.stream.safetyCopy.name) is gone") && text.contains("remove"), "\(text)")
            #expect(try ReplicationRecord.load(store: original, stream: first.stream.name)?.rewrite == .replace, "nothing changed")
            await nats.close()
        }
    }

    @Test("a replicator refuses a stream name kept for a rewrite's safety copy")
    func safetyCopyNamesAreRefused() async throws {
        try await withNATSServers { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 1)
            try await store.close()
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            var options = ReplicationOptions()
            options.stream = "ALBUMS_REWRITE"
            await #expect(throws: ReplicationError.self) {
                try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            }
            #expect(try ReplicationStream(name: "ALBUMS_REWRITE").bucket == "ALBUMS")
            #expect(try ReplicationStream(name: "ALBUMS").safetyCopy.name == "ALBUMS_REWRITE")
            await #expect(throws: JetStreamAPIError.self, "nothing was created") { try await JetStream(nats).streamInfo("ALBUMS_REWRITE") }
            await nats.close()
        }
    }
}
