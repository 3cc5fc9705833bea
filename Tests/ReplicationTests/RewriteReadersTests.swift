import EventLog
import Foundation
import NATSClient
import NATSTestSupport
@testable import Replication
import StorageTestSupport
import Synchronization
import Testing
import VirtualTourist

extension ReplicationTests {
    @Test("while a rewrite replaces the stream, a restore and a follower wait for it and say so, a live follower shows it, and a stalled rewrite is named")
    func readersWaitWhileTheStreamIsReplaced() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let live = TemporaryFolder.uniquePath("replication-live")
            let later = TemporaryFolder.uniquePath("replication-later")
            let restored = TemporaryFolder.uniquePath("replication-restored")
            let stalled = TemporaryFolder.uniquePath("replication-stalled")
            defer { for folder in [original, live, later, restored, stalled] { try? FileManager.default.removeItem(atPath: folder) } }
            let (store, nats, first, options) = try await shippedStore(at: original, on: servers, pins: 3, photos: 2)
            let jetStream = JetStream(nats)
            let stream = first.stream
            // A replica following live, and one restored now and closed, to be started again later.
            let follower = try await Follower.start(
                connection: nats, stream: stream, folder: live, servers: servers.urls, storeOptions: storeOptions())
            let following = Task { try await follower.run(pollExpiry: .milliseconds(200)) }
            try await Follower.start(connection: nats, stream: stream, folder: later, servers: servers.urls, storeOptions: storeOptions())
                .close()

            // A place forgotten, and its rewrite stopped once the stream is deleted: what a crash
            // of the original's replicator there leaves.
            let pin = try #require(store.state.pins.keys.sorted().first)
            try await store.forget(pin)
            try await rewriteStoppedAtReplace(first, store: original, jetStream: jetStream)
            try await jetStream.deleteStream(stream.name)
            let copyEnd = try await jetStream.streamInfo(stream.safetyCopy.name).state.lastSequence
            #expect(try await StreamReplacement.underWay(on: stream, jetStream: jetStream) == StreamReplacement(written: 0, total: copyEnd))
            // Written back in part: still being replaced, and a reading that ends there is a prefix.
            _ = try await jetStream.createStream(stream.configuration(replicas: 3))
            let firstMessage = try await jetStream.message(stream: stream.safetyCopy.name, sequence: 1)
            _ = try await jetStream.publish(stream.subject, payload: firstMessage.payload, headers: firstMessage.headers)
            #expect(try await StreamReplacement.underWay(on: stream, jetStream: jetStream) == StreamReplacement(written: 1, total: copyEnd))
            #expect(try await StreamReplacement.copyGoesPast(1, of: stream, jetStream: jetStream))
            #expect(try await StreamReplacement.copyGoesPast(copyEnd, of: stream, jetStream: jetStream) == false)
            #expect(try await StreamReplacement.underWay(on: stream.safetyCopy, jetStream: jetStream) == nil, "a copy has no copy")

            #expect(await eventually { follower.status.streamRewriting })
            #expect(follower.status.lastError == nil, "a rewrite is a wait, not a failure")

            // Nothing moves: the restore gives up with what to do, and leaves nothing behind.
            let stopped = await #expect(throws: ReplicationError.self) {
                try await StreamRestore.restore(connection: nats, stream: stream, to: stalled, patience: .milliseconds(1500))
            }
            #expect(stopped.map { "\($0)" }?.contains("has not moved") == true, "\(String(describing: stopped))")
            #expect(stopped.map { "\($0)" }?.contains(stream.safetyCopy.name) == true)
            #expect(!FileManager.default.fileExists(atPath: stalled) && !FileManager.default.fileExists(atPath: stalled + ".restoring"))

            // A restore and a follower started now wait, and say why.
            let notes = Mutex<[String]>([])
            let note: @Sendable (String) -> Void = { text in notes.withLock { $0.append(text) } }
            let restoring = Task { try await StreamRestore.restore(connection: nats, stream: stream, to: restored, waiting: note) }
            let starting = Task {
                try await Follower.start(
                    connection: nats, stream: stream, folder: later, servers: servers.urls, storeOptions: storeOptions(), progress: note)
            }
            #expect(await eventually { notes.withLock { $0.filter { $0.contains("is being rewritten") }.count >= 2 } })
            #expect(!FileManager.default.fileExists(atPath: restored))

            // The original's replicator, started again, finishes the rewrite and ships the forget.
            let second = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            try await second.shipAvailable()
            #expect(second.status.rewrite == nil)
            #expect(try await StreamReplacement.underWay(on: stream, jetStream: jetStream) == nil)

            // The restore reads the stream as the rewrite leaves it: it may finish before the
            // replicator ships the forget after it (CI once caught 15 of 16). Whatever it took
            // is the original's history to that point, chain head included.
            let report = try await restoring.value
            let forgetAt = try allEvents(original).map(EventCodec.decode).last { $0.event.typeName == "PlaceForgotten" }?.sequence
            #expect(report.events == store.lastSequence || report.events + 1 == forgetAt, "\(report.events) of \(store.lastSequence)")
            #expect(try allEvents(restored) == Array(allEvents(original).prefix(Int(report.events))))
            let originalLog = try LogReader(directory: original + "/log", payloadCodec: EventCodec.blockCodec)
            #expect(try head(restored) == originalLog.head(at: report.events))
            let started = try await starting.value
            let catchingUp = Task { try await started.run(pollExpiry: .milliseconds(200)) }
            for replica in [follower, started] {
                #expect(await eventually { replica.store.lastSequence == store.lastSequence }, "\(replica.status)")
                #expect(replica.store.state == store.state)
            }
            #expect(await eventually { !follower.status.streamRewriting })
            catchingUp.cancel()
            _ = try? await catchingUp.value
            try await started.close()
            following.cancel()
            _ = try? await following.value
            try await follower.close()
            #expect(try allEvents(live) == allEvents(original))
            #expect(try allEvents(later) == allEvents(original))
            try await store.close()
            await nats.close()
        }
    }

    @Test("a follower whose new consumer starts before the message it needs (a stream written back from empty) passes over what it has")
    func aConsumerStartingEarlyLosesNothing() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let live = TemporaryFolder.uniquePath("replication-live")
            defer { for folder in [original, live] { try? FileManager.default.removeItem(atPath: folder) } }
            let (store, nats, first, options) = try await shippedStore(at: original, on: servers, pins: 2, photos: 2)
            let jetStream = JetStream(nats)
            let stream = first.stream
            let shipped = try await jetStream.streamInfo(stream.name).state.lastSequence
            var messages: [StoredMessage] = []
            for sequence in 1...shipped { messages.append(try await jetStream.message(stream: stream.name, sequence: sequence)) }

            // A long fetch: what lands while it waits comes in one answer.
            let follower = try await Follower.start(
                connection: nats, stream: stream, folder: live, servers: servers.urls, storeOptions: storeOptions())
            let following = Task { try await follower.run(pollExpiry: .seconds(4)) }

            // The stream made again, empty, as a rewrite's replace makes it; the follower's new
            // consumer, asked for the message after the last it has, starts at message 1.
            try await jetStream.deleteStream(stream.name)
            _ = try await jetStream.createStream(stream.configuration(replicas: 3))
            #expect(await eventually { (try? await jetStream.streamInfo(stream.name).state.consumers ?? 0) ?? 0 >= 1 })
            // Written back, then new events shipped after them, all within one fetch of the follower.
            for message in messages {
                _ = try await jetStream.publish(stream.subject, payload: message.payload, headers: message.headers)
            }
            try await addAlbums(store, pins: 1, photos: 2, seed: 3)
            try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options).shipAvailable()
            #expect(try await jetStream.streamInfo(stream.name).state.lastSequence > shipped)

            #expect(await eventually { follower.store.lastSequence == store.lastSequence }, "\(follower.status)")
            #expect(follower.store.state == store.state)
            following.cancel()
            _ = try? await following.value
            try await follower.close()
            #expect(try allEvents(live) == allEvents(original))
            try await store.close()
            await nats.close()
        }
    }
}
