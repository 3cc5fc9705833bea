import EventLog
import FileIO
import Foundation
import StorageTestSupport
import ReliabilitySupport
@testable import VirtualTourist

/// Folds events from the empty state, as a store with no snapshot would.
func fold(_ events: [RecordedEvent]) -> TouristState {
    var state = TouristState()
    state.apply(contentsOf: events)
    return state
}

/// Opens the store in `folder` as a crash (or a fault) left it and checks every guarantee of
/// DESIGN.md that a crash could break; returns what it found broken (nothing, when sound).
///
/// - It opens (a crash never leaves a store that cannot be opened).
/// - Every acknowledged event is there, exactly (`acknowledged`: sequence → fingerprint).
/// - The log is a prefix of what was written (`written`, when known): no event invented,
///   reordered or changed; sequences run from 1 without a gap.
/// - The projections equal a fresh fold of the log (whatever snapshot they started from).
/// - Every photo the state references has its blob, with the right bytes, also after a
///   collection.
/// - It is usable: an action is accepted, and the store closes and reopens to the same state.
func violations(
    ofStoreAt folder: String, fileSystem: any FileSystem, acknowledged: [UInt64: String], written: [RecordedEvent]?
) async -> [String] {
    var found: [String] = []
    let store: TouristStore
    do {
        store = try await TouristStore.open(at: folder, options: crashTestOptions(), fileSystem: fileSystem)
    } catch {
        return ["the store does not open: \(error)"]
    }
    do {
        let events = try store.events()
        if events.map(\.sequence) != Array(1...UInt64(max(events.count, 1))).prefix(events.count).map({ $0 }) {
            found.append("the log's sequences are not 1…\(events.count)")
        }
        for (sequence, print) in acknowledged.sorted(by: { $0.key < $1.key }) {
            guard sequence <= events.count else {
                found.append("acknowledged event \(sequence) is lost (the log ends at \(events.count))")
                break
            }
            if fingerprint(events[Int(sequence) - 1]) != print { found.append("acknowledged event \(sequence) changed") }
        }
        if let written {
            if events.count > written.count || events != Array(written.prefix(events.count)) {
                found.append("the log (\(events.count) events) is not a prefix of what was written (\(written.count))")
            }
        }
        let state = store.state
        if fold(events) != state { found.append("the state differs from a fresh fold of the log") }
        found += missingBlobs(store, "after opening")
        _ = try store.collectGarbage(grace: .zero)
        found += missingBlobs(store, "after a collection")

        let place = Coordinate(latitude: 1, longitude: 2)
        let added = try await store.record(.pinDropped(PinID(UInt64.max - UInt64(events.count)), place))
        try await store.close()
        let reopened = try await TouristStore.open(at: folder, options: crashTestOptions(), fileSystem: fileSystem)
        if reopened.lastSequence != added.sequence || reopened.state != fold(events + [added]) {
            found.append("after one more action and a reopen, the state is not the fold of the log")
        }
        try await reopened.close()
    } catch {
        found.append("the recovered store failed: \(error)")
        try? await store.close()
    }
    return found
}

private func missingBlobs(_ store: TouristStore, _ when: String) -> [String] {
    store.state.referencedDigests.compactMap { digest in
        guard let bytes = try? store.photoBytes(digest) else { return "the blob of \(digest) is missing \(when)" }
        return PhotoDigest.of(bytes) == digest ? nil : "the blob of \(digest) has the wrong bytes \(when)"
    }
}

/// Every event of the store in `folder`, read without changing anything; nil when it cannot
/// be read (a reference for what a run wrote).
func writtenEvents(inStoreAt folder: String, fileSystem: any FileSystem) -> [RecordedEvent]? {
    guard let reader = try? StoreReader.open(at: folder, fileSystem: fileSystem) else { return nil }
    var events: [RecordedEvent] = []
    guard (try? reader.forEachEvent(from: 1, through: nil) { events.append($0) }) != nil else { return nil }
    return events
}
