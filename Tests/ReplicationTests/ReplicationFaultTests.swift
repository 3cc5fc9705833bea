import EventLog
import Foundation
import NATSClient
import NATSTestSupport
import Replication
import StorageTestSupport
import Synchronization
import Testing
import VirtualTourist

@Suite("Replication when servers fail", .serialized)
struct ReplicationFaultTests {
    /// The stream's leader, as server number 1…3 (scripts/nats-cluster names them n1…n3).
    func leader(_ nats: NATSConnection, stream: String) async throws -> Int? {
        // scripts/nats-cluster names server N "nN-" and its folder's name.
        let name = try await JetStream(nats).streamInfo(stream).cluster?.leader
        return name.flatMap { Int($0.dropFirst().prefix { $0 != "-" }) }
    }

    @Test("kill -9 of the stream's leader while the app writes: no gap, no duplicate, replication catches up")
    func leaderKilled() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let copy = TemporaryFolder.uniquePath("replication-copy")
            defer { for folder in [original, copy] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            var options = ReplicationOptions()
            options.maxBatchEvents = 5
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            let shipping = Task { try await replicator.run() }
            try await addAlbums(store, pins: 3, photos: 2)
            let victim = try #require(try await leader(nats, stream: replicator.stream.name))
            try await servers.kill(victim)
            try await addAlbums(store, pins: 3, photos: 2, seed: 1)
            #expect(await eventually(timeout: .seconds(120)) { replicator.status.acknowledgedEvents == store.lastSequence })
            shipping.cancel()
            _ = try? await shipping.value
            try await store.close()
            // The streams may still be electing leaders after the kill: the restore waits for them.
            let report = try await StreamRestore.restore(connection: nats, stream: replicator.stream, to: copy)
            #expect(report.events == store.lastSequence)
            #expect(try allEvents(copy) == allEvents(original))
            #expect(try head(copy) == head(original))
            await nats.close()
        }
    }

    /// `vt replicate --once` run a moment after the stream's leader died used to fail at once
    /// ("cannot reach JetStream to create the stream … no reply within 5 s") while the cluster,
    /// its quorum intact, elected another leader; a restore already waited. A start waits too,
    /// saying what for.
    @Test("a one-shot replication right after the stream's leader is killed waits for the election and ships")
    func oneShotThroughAnElection() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-once-election")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 2, photos: 1)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let first = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            _ = try await first.shipAvailable()
            let victim = try #require(try await leader(nats, stream: first.stream.name))
            try await addAlbums(store, pins: 1, photos: 1, seed: 1)
            try await servers.kill(victim)
            let waits = Notes()
            var options = ReplicationOptions()
            options.onWait = { waits.add($0) }
            let again = try await Replicator.start(store: original, connection: nats, servers: servers.urls, options: options)
            let status = try await again.shipAvailable()
            #expect(status.acknowledgedEvents == store.lastSequence)
            #expect(waits.all.allSatisfy { $0.hasPrefix("waiting for the cluster to ") && $0.contains("for up to 90 s") })
            try await store.close()
            await nats.close()
        }
    }

    @Test("two of three servers down: the app keeps committing, and the backlog drains when they return")
    func majorityDown() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            defer { try? FileManager.default.removeItem(atPath: original) }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 1)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            let shipping = Task { try await replicator.run() }
            #expect(await eventually { replicator.status.acknowledgedEvents == store.lastSequence })
            let acknowledgedBefore = replicator.status.acknowledgedEvents
            try await servers.kill(2)
            try await servers.kill(3)
            // The app's commits do not wait for the cluster: they are done while it has no
            // majority, and the replicator, having tried to ship them, says why it cannot.
            try await addAlbums(store, pins: 3, photos: 2, seed: 1)
            #expect(store.lastSequence > acknowledgedBefore)
            #expect(await eventually(timeout: .seconds(90)) { replicator.status.lastError != nil })
            #expect(replicator.status.acknowledgedEvents < store.lastSequence)
            try await servers.restart(2)
            try await servers.restart(3)
            #expect(await eventually(timeout: .seconds(90)) { replicator.status.acknowledgedEvents == store.lastSequence })
            #expect(replicator.status.lagEvents == 0)
            shipping.cancel()
            _ = try? await shipping.value
            try await store.close()
            await nats.close()
        }
    }

    @Test("all three servers killed and restarted: nothing acknowledged is lost")
    func wholeClusterRestarted() async throws {
        try await withNATSServers(count: 3) { servers in
            let original = TemporaryFolder.uniquePath("replication-original")
            let copy = TemporaryFolder.uniquePath("replication-copy")
            defer { for folder in [original, copy] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: original, options: storeOptions())
            try await addAlbums(store, pins: 3, photos: 3)
            try await store.close()
            var nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await Replicator.start(store: original, connection: nats, servers: servers.urls)
            let acknowledged = try await replicator.shipAvailable().acknowledgedEvents
            await nats.close()
            for server in 1...3 { try await servers.kill(server) }
            for server in 1...3 { try await servers.restart(server) }
            nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            // The stream may take a moment to elect a leader after a cold start.
            var report: RestoreReport? = nil
            _ = await eventually(timeout: .seconds(60)) {
                report = try? await StreamRestore.restore(connection: nats, stream: replicator.stream, to: copy)
                return report != nil
            }
            #expect(report?.events == acknowledged)
            #expect(try head(copy) == LogReader(directory: original + "/log", payloadCodec: EventCodec.blockCodec).head(at: acknowledged))
            #expect(storedPhotos(copy) == storedPhotos(original))
            await nats.close()
        }
    }

    @Test("bad URLs, wrong credentials and an unreachable cluster are clear errors and leave the store untouched")
    func badTargets() async throws {
        let original = TemporaryFolder.uniquePath("replication-original")
        defer { try? FileManager.default.removeItem(atPath: original) }
        let store = try await TouristStore.open(at: original, options: storeOptions())
        try await addAlbums(store, pins: 1, photos: 1)
        try await store.close()
        let before = try allEvents(original)
        let listing = try FileManager.default.subpathsOfDirectory(atPath: original).sorted()

        await #expect(throws: NATSError.self) { _ = try await NATSConnection.connect("http://127.0.0.1:1") }
        var quick = testOptions(connectTimeout: .seconds(1))
        quick.attemptTimeout = .milliseconds(300)
        let unreachable = await #expect(throws: NATSError.self) {
            _ = try await NATSConnection.connect("nats://127.0.0.1:9", options: quick)
        }
        #expect("\(unreachable!)".contains("127.0.0.1:9"))
        try await withNATSServers(count: 1, auth: ["--user", "ann", "--password", "secret"]) { servers in
            let wrong = servers.url(1).replacingOccurrences(of: "nats://", with: "nats://ann:wrong@")
            let refused = await #expect(throws: NATSError.self) { _ = try await NATSConnection.connect(wrong, options: quick) }
            #expect(!"\(refused!)".contains("wrong"))
        }
        #expect(throws: ReplicationError.self) { _ = try ReplicationStream(name: "has.dots") }
        #expect(try allEvents(original) == before)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: original).sorted() == listing)
    }

    @Test("a restore of a stream that is not there, or into a folder that is not empty, changes nothing")
    func restoreRefusals() async throws {
        try await withNATSServers(count: 1) { servers in
            let target = TemporaryFolder.uniquePath("replication-target")
            defer { try? FileManager.default.removeItem(atPath: target) }
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let missing = await #expect(throws: ReplicationError.self) {
                _ = try await StreamRestore.restore(connection: nats, stream: ReplicationStream(name: "VT_nothing"), to: target)
            }
            #expect("\(missing!)".contains("VT_nothing"))
            #expect(!FileManager.default.fileExists(atPath: target))
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: target + "/mine.txt"))
            await #expect(throws: ReplicationError.self) {
                _ = try await StreamRestore.restore(connection: nats, stream: ReplicationStream(name: "VT_nothing"), to: target)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: target) == ["mine.txt"])
            await nats.close()
        }
    }
}

/// Lines a callback was given, from any task.
final class Notes: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
