import EventLog
import Foundation
import NATSClient
import NATSTestSupport
@testable import Replication
import Synchronization
import Testing
import VirtualTourist

extension ReplicationTests {
    @Test("while a rewrite replaces the stream, a restore and a follower wait for it and say so, a live follower shows it, and a stalled rewrite is named")
    func readersWaitWhileTheStreamIsReplaced() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = temporaryFolder("original"), live = temporaryFolder("live"), later = temporaryFolder("later")
            let restored = temporaryFolder("restored"), stalled = temporaryFolder("stalled")
            defer { for folder in [original, live, later, restored, stalled] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 3, photos: 2)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let jetStream = JetStream(nats)
            var options = ReplicationOptions()
            options.maxBatchEvents = 4
            let first = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            try await first.shipAvailable()
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
            #expect(try await StreamReplacement.underWay(on: stream, jetStream: jetStream)?.written == 0)

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

            let report = try await restoring.value
            #expect(report.events == store.lastSequence)
            #expect(try allEvents(restored) == allEvents(original))
            #expect(try head(restored) == head(original))
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
}
