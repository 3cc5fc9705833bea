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

/// Sync of devices through the cluster (docs/SYNC.md): each open store ships its logs and takes
/// the others' from their streams, live or once, and the devices converge.
// The time limit only ends a test that hangs: every wait is for an event.
@Suite("Sync through the cluster", .serialized, .timeLimit(.minutes(3)))
struct ClusterSyncTests {
    /// A phone with two albums and a laptop cloned from it that added one; they never synced
    /// folder to folder after the clone, so the phone does not know the laptop yet.
    private func twoDevices(_ body: (NATSTestServers, _ phone: String, _ laptop: String) async throws -> Void) async throws {
        try await withNATSServers(count: 1) { servers in
            let phone = TemporaryFolder.uniquePath("sync-phone")
            let laptop = TemporaryFolder.uniquePath("sync-laptop")
            defer { for folder in [phone, laptop] { try? FileManager.default.removeItem(atPath: folder) } }
            let store = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(store, pins: 2, photos: 2)
            try await store.close()
            _ = try StoreSync.clone(from: phone, to: laptop, name: "laptop", options: storeOptions())
            let other = try await TouristStore.open(at: laptop, options: storeOptions())
            try await addAlbums(other, pins: 1, photos: 2, seed: 5)
            try await other.close()
            // The phone goes on before it first ships: its first message holds events the
            // laptop's copy has and events it lacks.
            let again = try await TouristStore.open(at: phone, options: storeOptions())
            try await addAlbums(again, pins: 1, photos: 1, seed: 9)
            try await again.close()
            try await body(servers, phone, laptop)
        }
    }

    /// Opens `folder`, syncs it once, closes it.
    private func syncOnce(_ folder: String, _ servers: NATSTestServers) async throws -> SyncStatus {
        let store = try await TouristStore.open(at: folder, options: storeOptions())
        let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
        do {
            let sync = try await ClusterSync.start(store: store, connection: nats, servers: servers.urls)
            let status = try await sync.syncOnce()
            try await store.close()
            await nats.close()
            return status
        } catch {
            try? await store.close()
            await nats.close()
            throw error
        }
    }

    /// The state a store folds, but for what is each device's own (the map region).
    private func shared(_ folder: String) async throws -> TouristState {
        let store = try await TouristStore.open(at: folder, options: storeOptions())
        let state = store.state
        try await store.close()
        return state
    }

    @Test("two devices that sync once each through the cluster hold the same map, photos and heads")
    func onceEachWay() async throws {
        try await twoDevices { servers, phone, laptop in
            // The phone ships first: it knows no other device yet, and its stream's first
            // message holds events the laptop's copy has and events it lacks.
            let first = try await syncOnce(phone, servers)
            #expect(first.peers.isEmpty)
            let second = try await syncOnce(laptop, servers)
            #expect(second.peers.allSatisfy { $0.lastError == nil })
            let third = try await syncOnce(phone, servers)  // finds the laptop by its bucket's list
            #expect(third.peers.allSatisfy { $0.lastError == nil })
            let laptopID = try StoreDevices.read(store: laptop).this.device
            #expect(third.peers.map(\.device) == [laptopID.description])
            #expect(third.eventsToReceive == 0 && third.eventsToSend == 0)
            let fourth = try await syncOnce(laptop, servers)
            #expect(fourth.peers.allSatisfy { $0.lastError == nil })
            let phoneState = try await shared(phone), laptopState = try await shared(laptop)
            #expect(phoneState.pins.count == 4)
            #expect(phoneState.pins == laptopState.pins)
            #expect(phoneState.sequence == laptopState.sequence)
            // Every photo either album shows came with it.
            for state in [phoneState] {
                let wanted = Set(state.referencedDigests.map(\.description))
                #expect(wanted.isSubset(of: storedPhotos(phone)))
                #expect(wanted.isSubset(of: storedPhotos(laptop)))
            }
            let phoneDevices = try StoreDevices.read(store: phone), laptopDevices = try StoreDevices.read(store: laptop)
            #expect(phoneDevices.copies.first?.head == (try head(laptop)))
            #expect(laptopDevices.copies.first?.head == (try head(phone)))
        }
    }

    /// Both stores open, a connection, and sync options that find a new device quickly.
    private func openBoth(_ phone: String, _ laptop: String, _ servers: NATSTestServers) async throws
        -> (TouristStore, TouristStore, NATSConnection, SyncOptions)
    {
        var options = SyncOptions()
        options.discoveryInterval = .milliseconds(200)
        return (
            try await TouristStore.open(at: phone, options: storeOptions()), try await TouristStore.open(at: laptop, options: storeOptions()),
            try await NATSConnection.connect(servers.urls, options: testOptions()), options
        )
    }

    @Test("live: a pin dropped or removed on one open device appears on the other's open store")
    func live() async throws {
        try await twoDevices { servers, phone, laptop in
            let (phoneStore, laptopStore, nats, options) = try await openBoth(phone, laptop, servers)
            let phoneSync = try await ClusterSync.start(store: phoneStore, connection: nats, servers: servers.urls, options: options)
            let laptopSync = try await ClusterSync.start(store: laptopStore, connection: nats, servers: servers.urls, options: options)
            let running = [Task { try await phoneSync.run() }, Task { try await laptopSync.run() }]
            defer { for task in running { task.cancel() } }

            let dropped = try await laptopStore.dropPin(at: Coordinate(latitude: 12.5, longitude: 41.9))
            let seen = try await phoneStore.waitForState { $0.pins[dropped] != nil && $0.pins.count == 5 }
            #expect(seen.pins[dropped]?.coordinate == Coordinate(latitude: 12.5, longitude: 41.9))

            let gone = try #require(phoneStore.state.pinsInDropOrder.first).id
            try await phoneStore.removePin(gone)
            _ = try await laptopStore.waitForState { $0.pins[gone] == nil }

            for task in running { task.cancel() }
            for task in running { _ = try? await task.value }
            let phoneState = phoneStore.state, laptopState = laptopStore.state
            try await phoneStore.close()
            try await laptopStore.close()
            await nats.close()
            // Each took the other's last action; the DeviceSeen each wrote after may still be
            // on its way, so the pins, not the whole state, are compared.
            #expect(phoneState.pins.keys.sorted() == laptopState.pins.keys.sorted())
            #expect(try await shared(phone).pins == shared(laptop).pins)
        }
    }

    @Test("the photos a sync stores after the events that name them are announced to the open store's subscribers")
    func photosThatComeAfterTheirEventsAreAnnounced() async throws {
        try await twoDevices { servers, phone, laptop in
            let (phoneStore, laptopStore, nats, options) = try await openBoth(phone, laptop, servers)
            let laptopSync = try await ClusterSync.start(store: laptopStore, connection: nats, servers: servers.urls, options: options)
            try await laptopSync.syncOnce()
            // The laptop's album's photos, which the phone lacks: each is named once it is stored.
            let held = Set(storedPhotos(phone).compactMap { PhotoDigest(hex: $0) })
            let wanted = laptopStore.state.referencedDigests.subtracting(held)
            let changes = phoneStore.changes()
            let phoneSync = try await ClusterSync.start(store: phoneStore, connection: nats, servers: servers.urls, options: options)
            try await phoneSync.syncOnce()
            var announced: Set<PhotoDigest> = []
            for await change in changes where !change.photosArrived.isEmpty {
                #expect(change.events.isEmpty)
                #expect(change.photosArrived.allSatisfy { (try? phoneStore.isPhotoStored($0)) == true })
                announced.formUnion(change.photosArrived)
                if announced.isSuperset(of: wanted) { break }
            }
            #expect(!wanted.isEmpty && announced.isSuperset(of: wanted))
            try await phoneStore.close()
            try await laptopStore.close()
            await nats.close()
        }
    }

    @Test("a forget on one device erases the place on a device that was offline, in every stream, and it never comes back")
    func aForgetReachesADeviceThatWasOffline() async throws {
        try await twoDevices { servers, phone, laptop in
            let (phoneStore, laptopStore, nats, options) = try await openBoth(phone, laptop, servers)
            let phoneSync = try await ClusterSync.start(store: phoneStore, connection: nats, servers: servers.urls, options: options)
            let phoneRunning = Task { try await phoneSync.run() }
            defer { phoneRunning.cancel() }
            // The laptop syncs once, drags one of the phone's pins (its own log now holds an event
            // of the place) and syncs again, then goes offline.
            let laptopSync = try await ClusterSync.start(store: laptopStore, connection: nats, servers: servers.urls, options: options)
            try await laptopSync.syncOnce()
            let pin = try #require(laptopStore.state.pinsInDropOrder.first).id
            try await laptopStore.dragPin(pin, to: Coordinate(latitude: 45, longitude: 7))
            try await laptopSync.syncOnce()
            _ = try await phoneStore.waitForState { $0.pins[pin]?.coordinate == Coordinate(latitude: 45, longitude: 7) }

            // Offline, the laptop does not hear of the forget; the phone erases the place, and
            // its streams (its own, and its copy of the laptop's) are rewritten without it.
            _ = try await phoneStore.forget(pin)
            let phoneID = try StoreDevices.read(store: phone).this.device, laptopID = try StoreDevices.read(store: laptop).this.device
            let phoneStreamClean = try await eventually {
                let shipped = (try? await shippedEvents(nats, stream: "VT_\(phoneID)")) ?? []
                return try !shipped.isEmpty && Self.whole(of: pin, shipped).isEmpty
            }
            #expect(phoneStreamClean)
            #expect(laptopStore.state.pins[pin] != nil, "the laptop, offline, still shows the place")

            // Back online: the laptop takes the forget, erases the place in every log it holds,
            // and its own stream is rewritten too; the place's events are whole nowhere.
            let back = try await ClusterSync.start(store: laptopStore, connection: nats, servers: servers.urls, options: options)
            let laptopRunning = Task { try await back.run() }
            defer { laptopRunning.cancel() }
            _ = try await laptopStore.waitForState { $0.pins[pin] == nil }
            // A stream being rewritten is empty for a moment: clean only once it holds every
            // event of its log again.
            var left: [String] = []
            let clean = try await eventually {
                left = []
                for folder in [phone, laptop] {
                    let devices = try StoreDevices.read(store: folder)
                    for log in [folder + "/log"] + devices.copies.map(\.logPath) where try !Self.wholeEvents(of: pin, in: log).isEmpty {
                        left.append(log)
                    }
                }
                for (id, folder) in [(laptopID, laptop), (phoneID, phone)] {
                    let stream = "VT_\(id)"
                    // Missing for a moment while it is rewritten.
                    let shipped = (try? await shippedEvents(nats, stream: stream)) ?? []
                    if try !Self.whole(of: pin, shipped).isEmpty || shipped.count != allEvents(folder).count { left.append(stream) }
                }
                return left.isEmpty
            }
            #expect(clean, "the forgotten place is whole in \(left)")
            #expect(phoneStore.state.pins[pin] == nil)
            // Both streams were deleted and made again by the rewrites: each device's reader of
            // the other's reads the new stream on.
            let later = try await laptopStore.dropPin(at: Coordinate(latitude: -20, longitude: 30))
            _ = try await phoneStore.waitForState { $0.pins[later] != nil }
            phoneRunning.cancel()
            laptopRunning.cancel()
            _ = try? await phoneRunning.value
            _ = try? await laptopRunning.value
            try await phoneStore.close()
            try await laptopStore.close()
            await nats.close()
        }
    }

    /// The events about `pin` (but its forget) that a log holds whole.
    static func wholeEvents(of pin: PinID, in log: String) throws -> [UInt64] {
        try whole(of: pin, LogReader(directory: log, payloadCodec: EventCodec.blockCodec).events(from: 1).all())
    }

    static func whole(of pin: PinID, _ events: [LogEvent]) throws -> [UInt64] {
        try events.filter { event in
            guard !event.isErased else { return false }
            let recorded = try EventCodec.decode(event)
            if case .placeForgotten = recorded.event { return false }
            return recorded.event.pin == pin
        }.map(\.sequence)
    }
}

