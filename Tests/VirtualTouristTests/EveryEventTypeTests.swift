import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Every event type through every codec and reader the app has: the envelope read by both
/// decoders, the JSON form both ways, the pin key, a log compacted into codec-2 blocks with pin
/// summaries read back (whole and pin by pin), and the state's snapshot. A new event type that
/// one of them leaves out fails here, whichever it is (docs/ARCHITECTURE.md, "Adding an event
/// type").
@Suite(.heavy) struct EveryEventTypeTests {
    @Test func everyTypeGoesThroughEveryCodecAndReader() async throws {
        let folder = TemporaryFolder("every-type")
        let story = try await compactedStore(in: folder, seed: 11, count: 2_000)
        let types = Set(story.events.map(\.event.typeName))
        #expect(types == Set(DomainEvent.schemaTypeNames), "the story holds every type that can be appended")

        var checked: [String: Int] = [:]
        for recorded in story.events {
            let payload = EventCodec.encode(recorded.event, cause: recorded.cause)
            let logEvent = LogEvent(sequence: recorded.sequence, timestamp: recorded.timestamp, payload: ArraySlice(payload))
            let name = recorded.event.typeName
            // The envelope, by the fast path and the general one.
            #expect(try EventCodec.decodeGenerally(logEvent) == recorded, "\(name): the general decoder")
            let fast = EventWireDecoder.decode(payload[...])
            #expect(fast?.event == recorded.event && fast?.cause == recorded.cause, "\(name): the fast decoder")
            // The JSON form (export, import, --json, /api/events).
            let line = try EventJSON(recorded).encodedLine()
            #expect(try EventJSON.decode(line).recorded() == recorded, "\(name): JSON")
            // The key its block's summary files it under.
            #expect(EventCodec.pinKeys.key(payload[...]) == recorded.event.pin?.rawValue, "\(name): the pin key")
            checked[name, default: 0] += 1
        }
        #expect(Set(checked.keys) == types)

        // What the log holds after compaction: blocks of codec 2 and summaries, then the tail.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.sub("log"))
        #expect(names.contains { $0.hasSuffix(".blk") } && names.contains { $0.hasSuffix(".keys") })
        let verified = try LogVerifier.verify(directory: folder.sub("log"), keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
        #expect(verified.isClean && verified.notes.isEmpty, "\(verified.problems) \(verified.notes)")
        #expect(verified.blocks > 0)

        var options = storeOptions(snapshotInterval: 500)
        options.log.compactsInBackground = false
        let store = try await TouristStore.open(at: folder.path, options: options)
        #expect(store.report.snapshot != nil, "the state came from a snapshot")
        #expect(store.state == fold(story.events), "the snapshot and the tail fold to the story's state")
        // The store gave the events its own times; sequence, event and cause are the story's.
        let written = story.events.map(Written.init)
        #expect(try store.events().map(Written.init) == written, "every event read back from blocks and tail")
        for pin in Set(story.events.compactMap(\.event.pin)) {
            #expect(
                try store.history(of: pin).map(Written.init) == written.filter { $0.event.pin == pin },
                "pin \(pin) through its summaries")
        }
        try await store.close()
    }

    /// What the store keeps of an appended event (its time is the store's clock's).
    struct Written: Equatable {
        var sequence: UInt64
        var event: DomainEvent
        var cause: UInt64?
        init(_ recorded: RecordedEvent) { (sequence, event, cause) = (recorded.sequence, recorded.event, recorded.cause) }
    }
}
