import EventLog
import Foundation
import StorageTestSupport
import Testing
import VirtualTourist

/// A place forgotten on the original before its events were shipped: they travel erased, and a
/// live replica takes them as they are (no cluster here: the batch is handed to the store as a
/// follower hands it over; ReplicationTests.forgottenBeforeShippingReachesAFollower does it
/// through a real one).
@Suite struct ErasedBatchTests {
    @Test("a replica takes events erased before they were shipped: the original's events, head and state")
    func aReplicaTakesEventsErasedBeforeShipping() async throws {
        let original = TemporaryFolder.uniquePath("replication-erased-original")
        let replica = TemporaryFolder.uniquePath("replication-erased-replica")
        defer { for folder in [original, replica] { try? FileManager.default.removeItem(atPath: folder) } }
        let store = try await TouristStore.open(at: original, options: storeOptions())
        try await addAlbums(store, pins: 2, photos: 2)
        let shipped = store.lastSequence
        let pinsBefore = Set(store.state.pins.keys)
        try await addAlbums(store, pins: 2, photos: 3, seed: 7)
        let pin = try #require(Set(store.state.pins.keys).subtracting(pinsBefore).sorted().first)
        let forgotten = try await store.forget(pin)
        #expect(forgotten.erasedEvents > 0)
        let events = try allEvents(original)
        #expect(events[Int(shipped)...].contains { $0.isErased })

        // The replica as a restore to `shipped` leaves it, then the rest as a follower gets it.
        var builder = try LogBuilder(
            directory: replica + "/log", identity: try #require(try LogReader(directory: original + "/log", payloadCodec: EventCodec.blockCodec).identity()))
        for event in events[..<Int(shipped)] { try builder.add(event) }
        _ = try builder.finish()
        var options = storeOptions()
        options.replicaOf = "a test's original"
        let follower = try await TouristStore.open(at: replica, options: options)
        let middle = Int(shipped) + 5
        _ = try await follower.appendReplicated(Array(events[Int(shipped)..<middle]))
        let head = try await follower.appendReplicated(Array(events[middle...]))

        #expect(head == (try store.head(at: store.lastSequence)))
        #expect(try allEvents(replica) == events)
        #expect(follower.state == store.state)
        #expect(follower.state.pins[pin] == nil)
        try await follower.close()
        // Reopened, it reads the same history, and verifies.
        let reopened = try await TouristStore.open(at: replica, options: options)
        #expect(reopened.state == store.state)
        try await reopened.close()
        #expect(try LogVerifier.verify(directory: replica + "/log", payloadCodec: EventCodec.blockCodec).isClean)
        try await store.close()
    }
}
