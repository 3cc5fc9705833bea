@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import ReliabilitySupport
import StorageTestSupport
@testable import VirtualTourist

/// Folds events from the empty state, as a store with no snapshot would.
func fold(_ events: [RecordedEvent]) -> TouristState {
    var state = TouristState()
    state.apply(contentsOf: events)
    return state
}

/// What a check proved of a store: its log up to `head` (hashed into the chain, so that the
/// hash stands for every byte before it) folds to `state`. The next check of the same store
/// starts there and reads only what came after, so a long kill loop does not slow down.
struct StoreCheckpoint {
    var head: LogHead
    var state: TouristState
}

/// ``violations(ofStoreAt:fileSystem:acknowledged:written:checkpoint:)`` from the first event.
func violations(
    ofStoreAt folder: String, fileSystem: any FileSystem, acknowledged: [UInt64: String], written: [RecordedEvent]?
) async -> [String] {
    var fromScratch: StoreCheckpoint?
    return await violations(
        ofStoreAt: folder, fileSystem: fileSystem, acknowledged: acknowledged, written: written, checkpoint: &fromScratch)
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
///
/// With a `checkpoint` from an earlier check, the log up to it must be unchanged (the same
/// head hash) and only the events after it are read and folded onto its state; the check
/// leaves a new checkpoint behind when it finds nothing wrong.
func violations(
    ofStoreAt folder: String, fileSystem: any FileSystem, acknowledged: [UInt64: String], written: [RecordedEvent]?,
    checkpoint: inout StoreCheckpoint?
) async -> [String] {
    var found: [String] = []
    let store: TouristStore
    var options = crashTestOptions()
    // A survivor of an interrupted upgrade may still be a format-1 store: it is opened as the
    // version of its day did (the tests' fixture writer; an app would upgrade it first).
    if (try? LogReader(directory: Path.join(folder, "log"), fileSystem: fileSystem))?.format == .v1 { options.log.writesFormatOne = true }
    do {
        store = try await TouristStore.open(at: folder, options: options, fileSystem: fileSystem)
    } catch {
        return ["the store does not open: \(error)"]
    }
    do {
        let logPath = Path.join(folder, "log")
        let first = (checkpoint?.head.sequence ?? 0) + 1
        if let checkpoint {
            let head = try LogReader(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).head(at: checkpoint.head.sequence)
            if head != checkpoint.head { found.append("the log up to \(checkpoint.head.sequence), checked before, changed") }
        }
        let events = store.lastSequence >= first ? try store.events(from: first) : []
        let last = first + UInt64(events.count) - 1
        if events.map(\.sequence) != Array(first..<first + UInt64(events.count)) {
            found.append("the log's sequences are not \(first)…\(last)")
        }
        for (sequence, print) in acknowledged.filter({ $0.key >= first }).sorted(by: { $0.key < $1.key }) {
            guard sequence <= last else {
                found.append("acknowledged event \(sequence) is lost (the log ends at \(last))")
                break
            }
            if fingerprint(events[Int(sequence - first)]) != print { found.append("acknowledged event \(sequence) changed") }
        }
        if let written {
            let expected = written.dropFirst(Int(first) - 1)
            if events.count > expected.count || events != Array(expected.prefix(events.count)) {
                found.append("the log (to \(last)) is not a prefix of what was written (\(written.count) events)")
            }
        }
        var folded = checkpoint?.state ?? TouristState()
        folded.apply(contentsOf: events)
        if folded != store.state { found.append("the state differs from a fresh fold of the log") }
        found += missingBlobs(store, "after opening")
        _ = try store.collectGarbage(grace: .zero)
        found += missingBlobs(store, "after a collection")

        let place = Coordinate(latitude: 1, longitude: 2)
        let added = try await store.record(.pinDropped(PinID(UInt64.max - store.lastSequence), place))
        try await store.close()
        folded.apply(added)
        let reopened = try await TouristStore.open(at: folder, options: options, fileSystem: fileSystem)
        if reopened.lastSequence != added.sequence || reopened.state != folded {
            found.append("after one more action and a reopen, the state is not the fold of the log")
        }
        try await reopened.close()
        if found.isEmpty, let head = try LogReader(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec).head(at: added.sequence) {
            checkpoint = StoreCheckpoint(head: head, state: folded)
        }
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
