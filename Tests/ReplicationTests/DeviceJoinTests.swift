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

/// A new device of a map made from the cluster alone (docs/SYNC.md, "A new device from the
/// cluster"): `vt clone --from nats://… --stream VT_<device>`.
// The time limit only ends a test that hangs: every wait is for an event.
@Suite("A new device from the cluster", .serialized, .timeLimit(.minutes(3)))
struct DeviceJoinTests {
    @Test("a device made from a stream holds the map and every photo its device keeps, and the two sync on")
    func aDeviceJoinsFromTheClusterAlone() async throws {
        try await withNATSServers(count: 1) { servers in
            let phone = TemporaryFolder.uniquePath("join-phone")
            let laptop = TemporaryFolder.uniquePath("join-laptop")
            let elsewhere = TemporaryFolder.uniquePath("join-elsewhere")
            defer { for folder in [phone, laptop, elsewhere] { try? FileManager.default.removeItem(atPath: folder) } }
            let phoneStore = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(phoneStore, pins: 2, photos: 3)
            // A removed photo is no longer shown, but the phone keeps its image for time travel's
            // retention window: a new device keeps it too.
            let pin = try #require(phoneStore.state.pinsInDropOrder.first).id
            let removed = try #require(phoneStore.state.pins[pin]?.album.slots.first?.digest)
            try await phoneStore.removePhoto(0, from: pin)
            #expect(!phoneStore.state.referencedDigests.contains(removed))
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let phoneSync = try await ClusterSync.start(store: phoneStore, connection: nats, servers: servers.urls)
            try await phoneSync.syncOnce()
            let phoneID = try StoreDevices.read(store: phone).this.device
            let stream = try ReplicationStream(name: "VT_\(phoneID)")

            let report = try await DeviceJoin.join(
                connection: nats, stream: stream, folder: laptop, name: "laptop", servers: servers.urls, storeOptions: storeOptions())
            let phoneMap = try StoreDevices.read(store: phone).this.map
            #expect(report.device.name == "laptop" && report.device.map == phoneMap)
            #expect(report.device.device != phoneID)
            #expect(report.status.peers.map(\.device) == [phoneID.description])
            #expect(report.status.peers.allSatisfy { $0.lastError == nil && $0.photosMissing == 0 })
            #expect(storedPhotos(laptop) == storedPhotos(phone), "every photo the phone keeps, the removed one's too")
            #expect(storedPhotos(laptop).contains(removed.description))
            let laptopStore = try await TouristStore.open(at: laptop, options: storeOptions())
            // The same pins and photos (the whole state once the phone, one device until then,
            // has taken the laptop's: a store of several devices notes who asked for an album).
            #expect(laptopStore.state.pins.keys.sorted() == phoneStore.state.pins.keys.sorted())
            #expect(laptopStore.state.referencedDigests == phoneStore.state.referencedDigests)
            #expect(report.events == laptopStore.lastSequence)
            // Its first sync made its stream, whose bucket names both devices: the phone finds it.
            let list = try await DeviceStreamReader.mapDevices(jetStream: JetStream(nats), device: report.device.device)
            #expect(Set(list?.devices ?? []) == [phoneID, report.device.device])

            let dropped = try await laptopStore.dropPin(at: Coordinate(latitude: -33.86, longitude: 151.21))
            let laptopSync = try await ClusterSync.start(store: laptopStore, connection: nats, servers: servers.urls)
            try await laptopSync.syncOnce()
            try await phoneSync.syncOnce()
            #expect(phoneStore.state.pins[dropped]?.coordinate == Coordinate(latitude: -33.86, longitude: 151.21))
            #expect(phoneStore.state.pins == laptopStore.state.pins)
            try await laptopStore.close()

            // A third device from the laptop's stream, whose bucket names the map and both devices.
            let tablet = TemporaryFolder.uniquePath("join-tablet")
            defer { try? FileManager.default.removeItem(atPath: tablet) }
            let third = try await DeviceJoin.join(
                connection: nats, stream: try ReplicationStream(name: "VT_\(report.device.device)"), folder: tablet, name: nil,
                servers: servers.urls, storeOptions: storeOptions())
            #expect(Set(third.status.peers.map(\.device)) == [phoneID.description, report.device.device.description])
            #expect(third.device.map == phoneMap)
            let tabletStore = try await TouristStore.open(at: tablet, options: storeOptions())
            #expect(tabletStore.state.pins == phoneStore.state.pins)
            try await tabletStore.close()

            // Refused, with nothing made or changed: a folder that holds a store, a bad name, a
            // stream the cluster does not have.
            let before = try allEvents(laptop).count
            await #expect(throws: ReplicationError.self) {
                _ = try await DeviceJoin.join(connection: nats, stream: stream, folder: laptop, name: nil, servers: servers.urls)
            }
            #expect(try allEvents(laptop).count == before)
            await #expect(throws: ReplicationError.self) {
                _ = try await DeviceJoin.join(connection: nats, stream: stream, folder: elsewhere, name: "", servers: servers.urls)
            }
            let unknown = try ReplicationStream(name: "VT_\(DeviceID.random())")
            var quick = SyncOptions()
            quick.patience = .seconds(1)
            let none = await #expect(throws: ReplicationError.self) {
                _ = try await DeviceJoin.join(
                    connection: nats, stream: unknown, folder: elsewhere, name: nil, servers: servers.urls, syncOptions: quick)
            }
            #expect("\(none.map { "\($0)" } ?? "")".contains("has no stream \(unknown.name)"))
            #expect(!FileManager.default.fileExists(atPath: elsewhere))

            try await phoneStore.close()
            await nats.close()
        }
    }
}
