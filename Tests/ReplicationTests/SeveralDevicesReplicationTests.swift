import DeviceLogs
import EventLog
import Foundation
import NATSClient
import NATSTestSupport
import Replication
import StorageTestSupport
import Testing
import VirtualTourist

/// Replication of a store of several devices (docs/REPLICATION.md, "A store of several devices"):
/// each device's log in its own stream, shipped by whichever store holds it.
@Suite("Replication of several devices", .serialized)
struct SeveralDevicesReplicationTests {
    /// A phone with two albums, and a laptop cloned from it that added one: synced both ways.
    private func twoDevices(_ phone: String, _ laptop: String) async throws {
        let store = try await TouristStore.open(at: phone, options: storeOptions())
        try await addAlbums(store, pins: 2, photos: 2)
        try await store.close()
        _ = try StoreSync.clone(from: phone, to: laptop, name: "laptop", options: storeOptions())
        let other = try await TouristStore.open(at: laptop, options: storeOptions())
        try await addAlbums(other, pins: 1, photos: 2, seed: 5)
        try await other.close()
        _ = try StoreSync.sync(store: phone, with: laptop, options: storeOptions())
    }

    /// Runs `body` with a one-server cluster, ``twoDevices(_:_:)`` and a folder for a restore.
    private func withTwoDevices(
        _ body: (NATSTestServers, _ phone: String, _ laptop: String, _ restored: String) async throws -> Void
    ) async throws {
        try await withNATSServers(count: 1) { servers in
            let phone = TemporaryFolder.uniquePath("devices-phone")
            let laptop = TemporaryFolder.uniquePath("devices-laptop")
            let restored = TemporaryFolder.uniquePath("devices-restored")
            defer { for folder in [phone, laptop, restored, restored + "-at"] { try? FileManager.default.removeItem(atPath: folder) } }
            try await twoDevices(phone, laptop)
            try await body(servers, phone, laptop, restored)
        }
    }

    private func device(_ folder: String) throws -> DeviceID { try StoreDevices.read(store: folder).this.device }

    @Test("each device's log goes to its own stream from either store, and a restore of one device brings the whole map")
    func eachLogToItsOwnStream() async throws {
        try await withTwoDevices { servers, phone, laptop, restored in
            // The laptop goes on after the sync: the phone's copy of its log lags behind.
            let other = try await TouristStore.open(at: laptop, options: storeOptions())
            try await addAlbums(other, pins: 1, photos: 1, seed: 6)
            try await other.close()
            let phoneID = try device(phone), laptopID = try device(laptop)
            let copyOfLaptop = StoreDevices.folder(store: phone, device: laptopID)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())

            var options = ReplicationOptions()
            options.maxBatchEvents = 3  // several messages a stream, so the stores' batches cross
            let fromPhone = try await MapReplicator.start(store: phone, connection: nats, servers: servers.urls, options: options)
            #expect(fromPhone.streams.map(\.name) == ["VT_\(phoneID)", "VT_\(laptopID)"])
            let phoneShipped = try await fromPhone.shipAvailable()
            #expect(phoneShipped.map(\.acknowledgedEvents) == [try allEvents(phone).count, try allEvents(copyOfLaptop).count].map(UInt64.init))

            // The laptop's own log goes on after what the phone shipped of it; its copy of the
            // phone's finds the phone's stream holding it.
            let fromLaptop = try await MapReplicator.start(store: laptop, connection: nats, servers: servers.urls, options: options)
            #expect(fromLaptop.streams.map(\.name) == ["VT_\(laptopID)", "VT_\(phoneID)"])
            let laptopShipped = try await fromLaptop.shipAvailable()
            #expect(laptopShipped[0].acknowledgedEvents == UInt64(try allEvents(laptop).count))
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)") == allEvents(laptop))
            #expect(try await shippedEvents(nats, stream: "VT_\(phoneID)") == allEvents(phone))

            // The phone again: its copy is behind the laptop's stream, which is no conflict; its
            // own new events go on after what it shipped.
            let store = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 1, seed: 7)
            try await store.close()
            let again = try await MapReplicator.start(store: phone, connection: nats, servers: servers.urls, options: options)
            let shippedAgain = try await again.shipAvailable()
            #expect(shippedAgain[0].acknowledgedEvents == UInt64(try allEvents(phone).count))
            #expect(try await shippedEvents(nats, stream: "VT_\(phoneID)") == allEvents(phone))
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)") == allEvents(laptop), "nothing shipped twice")

            // A restore of the phone takes the laptop's log from its own stream, whole: what the
            // phone holds once it syncs with the laptop.
            let report = try await StreamRestore.restore(connection: nats, stream: again.streams[0], to: restored)
            #expect(report.otherDevices == 1 && report.devicesNotFound.isEmpty && report.missingPhotos == 0)
            #expect(report.otherDeviceEvents == UInt64(try allEvents(laptop).count))
            _ = try StoreSync.sync(store: phone, with: laptop, options: storeOptions())
            #expect(try allEvents(restored) == allEvents(phone))
            #expect(try allEvents(StoreDevices.folder(store: restored, device: laptopID)) == allEvents(laptop))
            let restoredDevices = try StoreDevices.read(store: restored)
            #expect(restoredDevices.this == (try StoreDevices.read(store: phone)).this)
            #expect(restoredDevices.copies.map(\.file) == [DeviceFile(map: restoredDevices.this.map, device: laptopID, name: "laptop")])
            let original = try await TouristStore.open(at: phone, options: storeOptions())
            let copy = try await TouristStore.open(at: restored, options: storeOptions())
            #expect(copy.state == original.state)
            for photo in try original.keptPhotos() { #expect(try copy.isPhotoStored(photo), "\(photo)") }
            try await copy.close()
            try await original.close()

            // A restore to an event number cannot say whose; a follower of one log would miss the others'.
            await #expect(throws: ReplicationError.self) {
                try await StreamRestore.restore(connection: nats, stream: again.streams[0], to: restored + "-at", at: .sequence(3))
            }
            #expect(!FileManager.default.fileExists(atPath: restored + "-at"))
            await #expect(throws: ReplicationError.self) {
                try await Follower.start(connection: nats, stream: again.streams[1], folder: restored + "-follow", servers: servers.urls)
            }
            await nats.close()
        }
    }

    @Test("a running replicator starts shipping a device's log once a sync brings it, and stops without an error")
    func aNewDeviceIsShippedWhileRunning() async throws {
        try await withNATSServers(count: 1) { servers in
            let phone = TemporaryFolder.uniquePath("devices-phone")
            let laptop = TemporaryFolder.uniquePath("devices-laptop")
            defer { for folder in [phone, laptop] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(store, pins: 1, photos: 1)
            try await store.close()
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await MapReplicator.start(store: phone, connection: nats, servers: servers.urls)
            #expect(replicator.streams.count == 1, "a store of one device ships one log")
            let running = Task { try await replicator.run() }

            _ = try StoreSync.clone(from: phone, to: laptop, name: "laptop", options: storeOptions())
            let other = try await TouristStore.open(at: laptop, options: storeOptions())
            try await addAlbums(other, pins: 1, photos: 1, seed: 3)
            try await other.close()
            _ = try StoreSync.sync(store: phone, with: laptop, options: storeOptions())
            let laptopID = try device(laptop)
            let copy = StoreDevices.folder(store: phone, device: laptopID)
            let copied = UInt64(try allEvents(copy).count)
            #expect(await eventually {
                replicator.replicators.count == 2 && replicator.statuses.last?.acknowledgedEvents == copied
            })
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)") == allEvents(copy))
            running.cancel()
            try await running.value
            await nats.close()
        }
    }

    @Test("a place forgotten on one device leaves every stream the store ships, the other device's too")
    func aForgetReachesEveryStream() async throws {
        try await withTwoDevices { servers, phone, laptop, restored in
            // The laptop drags one of the phone's pins: its log holds events of the place.
            let other = try await TouristStore.open(at: laptop, options: storeOptions())
            let pin = try #require(other.state.pins.keys.sorted().first)
            _ = try await other.dragPin(pin, to: Coordinate(latitude: 45, longitude: 7))
            try await other.close()
            _ = try StoreSync.sync(store: phone, with: laptop, options: storeOptions())
            let laptopID = try device(laptop)
            let copyOfLaptop = StoreDevices.folder(store: phone, device: laptopID)
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let replicator = try await MapReplicator.start(store: phone, connection: nats, servers: servers.urls)
            try await replicator.shipAvailable()
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)").allSatisfy { !$0.isErased })

            let store = try await TouristStore.open(at: phone, options: storeOptions())
            let forgotten = try await store.forget(pin)
            #expect(forgotten.erasedEvents > 0)
            try await store.close()
            #expect(try allEvents(copyOfLaptop).contains(where: \.isErased), "the forget erased the laptop's drag in the copy")

            // The forget count moved: both streams are compared with their logs and rewritten.
            let after = try await MapReplicator.start(store: phone, connection: nats, servers: servers.urls)
            try await after.shipAvailable()
            // (The phone's own stream is compared once more after its PlaceForgotten left, and
            // found clean: its last rewrite is that compare.)
            #expect(after.replicators.allSatisfy { $0.lastRewrite != nil }, "\(after.replicators.map(\.lastRewrite))")
            #expect(after.replicators[1].lastRewrite?.streamRewritten == true)
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)") == allEvents(copyOfLaptop))
            #expect(try await shippedEvents(nats, stream: after.streams[0].name) == allEvents(phone))

            // A restore of the laptop's stream has no trace of the place either.
            _ = try await StreamRestore.restore(connection: nats, stream: after.streams[1], to: restored)
            let copy = try await TouristStore.open(at: restored, options: storeOptions())
            #expect(copy.state.pins[pin] == nil)
            try await copy.close()
            await nats.close()
        }
    }

    @Test("a copy whose stream the device shipped further leaves the rewrite to the device, which makes it once a sync brings the forget")
    func aStreamAheadOfTheCopyIsRewrittenByItsDevice() async throws {
        try await withTwoDevices { servers, phone, laptop, _ in
            let other = try await TouristStore.open(at: laptop, options: storeOptions())
            let pin = try #require(other.state.pins.keys.sorted().first)
            _ = try await other.dragPin(pin, to: Coordinate(latitude: 45, longitude: 7))
            try await other.close()
            _ = try StoreSync.sync(store: phone, with: laptop, options: storeOptions())
            // The laptop goes on and ships its own log: its stream runs past the phone's copy.
            let more = try await TouristStore.open(at: laptop, options: storeOptions())
            try await addAlbums(more, pins: 1, photos: 1, seed: 8)
            try await more.close()
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            try await MapReplicator.start(store: laptop, connection: nats, servers: servers.urls).shipAvailable()
            let laptopID = try device(laptop)

            let store = try await TouristStore.open(at: phone, options: storeOptions())
            _ = try await store.forget(pin)
            try await store.close()
            let fromPhone = try await MapReplicator.start(store: phone, connection: nats, servers: servers.urls)
            try await fromPhone.shipAvailable()
            #expect(fromPhone.replicators[1].lastRewrite == nil, "the phone's copy cannot rewrite a stream that runs past it")
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)").allSatisfy { !$0.isErased })
            #expect(try await shippedEvents(nats, stream: fromPhone.streams[0].name) == allEvents(phone))

            // The forget reaches the laptop by a sync; its own replicator rewrites its stream.
            _ = try StoreSync.sync(store: laptop, with: phone, options: storeOptions())
            _ = try await StoreSync.finishForgets(in: laptop, options: storeOptions())
            #expect(try allEvents(laptop).contains(where: \.isErased))
            let fromLaptop = try await MapReplicator.start(store: laptop, connection: nats, servers: servers.urls)
            try await fromLaptop.shipAvailable()
            #expect(try await shippedEvents(nats, stream: "VT_\(laptopID)") == allEvents(laptop))
            await nats.close()
        }
    }
}
