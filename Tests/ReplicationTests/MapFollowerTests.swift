import ClusterSync
import DeviceLogs
import EventLog
import Foundation
import NATSClient
import NATSTestSupport
import Replication
import StorageTestSupport
import Testing
import VirtualTourist

/// A read-only replica of a map of several devices (docs/SYNC.md, "Following a map"): `vt
/// follow` of one device's stream, once its map has more than one device.
// The time limit only ends a test that hangs: every wait is for an event.
@Suite("Following a map of several devices", .serialized, .timeLimit(.minutes(3)))
struct MapFollowerTests {
    @Test("a replica of the map holds every device's log, stays live, erases what is forgotten, refuses changes and goes on after a restart")
    func aReplicaOfTheMapFollowsEveryDevice() async throws {
        try await withNATSServers(count: 1) { servers in
            let phone = TemporaryFolder.uniquePath("follow-phone")
            let laptop = TemporaryFolder.uniquePath("follow-laptop")
            let replica = TemporaryFolder.uniquePath("follow-replica")
            defer { for folder in [phone, laptop, replica] { try? FileManager.default.removeItem(atPath: folder) } }
            let first = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(first, pins: 2, photos: 2)
            try await first.close()
            _ = try StoreSync.clone(from: phone, to: laptop, name: "laptop", options: storeOptions())
            let phoneStore = try await TouristStore.open(at: phone, options: storeOptions())
            let laptopStore = try await TouristStore.open(at: laptop, options: storeOptions())
            try await addAlbums(laptopStore, pins: 1, photos: 2, seed: 5)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            var options = SyncOptions()
            options.discoveryInterval = .milliseconds(200)
            let phoneSync = try await ClusterSync.start(store: phoneStore, connection: nats, servers: servers.urls, options: options)
            let laptopSync = try await ClusterSync.start(store: laptopStore, connection: nats, servers: servers.urls, options: options)
            // Each ships, and the phone's bucket comes to name the laptop.
            try await phoneSync.syncOnce()
            try await laptopSync.syncOnce()
            try await phoneSync.syncOnce()
            let running = [Task { try await phoneSync.run() }, Task { try await laptopSync.run() }]
            defer { for task in running { task.cancel() } }
            let phoneID = try StoreDevices.read(store: phone).this.device
            let stream = try ReplicationStream(name: "VT_\(phoneID)")
            #expect(try await MapFollower.severalDevices(of: stream, jetStream: JetStream(nats))?.count == 2)

            // Whole before it is served: the map as the phone folds it, with every photo shown.
            let follower = try await MapFollower.start(
                connection: nats, stream: stream, folder: replica, servers: servers.urls, storeOptions: storeOptions(), syncOptions: options)
            #expect(follower.store.state.pins.count == 3)
            #expect(follower.store.state.pins == phoneStore.state.pins)
            #expect(Set(follower.store.state.referencedDigests.map(\.description)).isSubset(of: storedPhotos(replica)))
            #expect(follower.status.peers.count == 2 && follower.status.eventsToSend == 0)
            let refused = await #expect(throws: DomainError.self) {
                try await follower.store.dropPin(at: Coordinate(latitude: 1, longitude: 2))
            }
            #expect(refused?.code == .readOnly)

            // Live: another device's action shows; a forget on the phone erases the place here.
            let following = Task { try await follower.run() }
            let dropped = try await laptopStore.dropPin(at: Coordinate(latitude: 12.5, longitude: 41.9))
            _ = try await follower.store.waitForState { $0.pins[dropped] != nil }
            let gone = try #require(phoneStore.state.pinsInDropOrder.first).id
            _ = try await phoneStore.forget(gone)
            _ = try await follower.store.waitForState { $0.pins[gone] == nil }
            following.cancel()
            _ = try? await following.value
            try await follower.close()
            for log in [replica + "/log"] + (try StoreDevices.read(store: replica).copies.map(\.logPath)) {
                #expect(try ClusterSyncTests.wholeEvents(of: gone, in: log).isEmpty, "\(log) holds the forgotten place")
            }
            // Nothing of its own anywhere: an empty log, and no stream by its id.
            #expect(try allEvents(replica).isEmpty)
            let replicaID = try StoreDevices.read(store: replica).this.device
            let noStream = await #expect(throws: JetStreamAPIError.self) { try await JetStream(nats).streamInfo("VT_\(replicaID)") }
            #expect(noStream?.errorCode == JetStreamAPIError.streamNotFound)

            // Started again on its folder, it goes on from what it holds.
            let again = try await MapFollower.start(
                connection: nats, stream: stream, folder: replica, servers: servers.urls, storeOptions: storeOptions(), syncOptions: options)
            let later = Task { try await again.run() }
            let another = try await phoneStore.dropPin(at: Coordinate(latitude: -20, longitude: 30))
            let seen = try await again.store.waitForState { $0.pins[another] != nil }
            #expect(seen.pins.keys.sorted() == phoneStore.state.pins.keys.sorted())
            later.cancel()
            _ = try? await later.value
            try await again.close()

            // A folder that holds a device's own events is no replica of the map, and is left as it is.
            let before = try allEvents(phone).count
            let notAReplica = await #expect(throws: ReplicationError.self) {
                _ = try await MapFollower.start(connection: nats, stream: stream, folder: phone, servers: servers.urls, storeOptions: storeOptions())
            }
            #expect("\(notAReplica.map { "\($0)" } ?? "")".contains("events of its own"))
            #expect(try allEvents(phone).count == before)

            for task in running { task.cancel() }
            for task in running { _ = try? await task.value }
            try await phoneStore.close()
            try await laptopStore.close()
            await nats.close()
        }
    }
}
