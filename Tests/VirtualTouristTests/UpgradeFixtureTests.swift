import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// The committed `Fixtures/store-v1` was written in log format 1. Upgraded to format 2, it
/// holds the same events (sequence, time, bytes) and time-travels to the same state at every
/// sequence number; the fresh snapshot at its end is the one opening uses.
@Suite struct UpgradeFixtureTests {
    @Test func theFormat1StoreFixtureUpgradesToTheSameEventsAndStates() async throws {
        let original = TemporaryFolder("upgrade-original")
        try FileManager.default.copyItem(atPath: StoreFixtureTests.fixture, toPath: original.path)
        let upgraded = TemporaryFolder("upgrade-fixture")
        try FileManager.default.copyItem(atPath: StoreFixtureTests.fixture, toPath: upgraded.path)
        #expect(try LogReader(directory: upgraded.sub("log"), payloadCodec: EventCodec.blockCodec).format == .v1)

        var options = StoreOptions()
        options.log.clock = TestClock()
        let report = try await TouristStore.upgrade(at: upgraded.path, options: options)
        #expect(report.events == 27 && !report.finishedInterrupted)
        #expect(try LogReader(directory: upgraded.sub("log"), payloadCodec: EventCodec.blockCodec).format == .v2)
        #expect(try LogReader(directory: upgraded.sub("log.format1"), payloadCodec: EventCodec.blockCodec).format == .v1)

        let before = try StoreReader.open(at: original.path)
        let after = try StoreReader.open(at: upgraded.path)
        #expect(after.lastSequence == 27)
        var oldEvents: [LogEvent] = [], newEvents: [LogEvent] = []
        let oldCursor = try LogReader(directory: original.sub("log"), payloadCodec: EventCodec.blockCodec).events()
        while let event = try oldCursor.next() { oldEvents.append(event) }
        let newCursor = try LogReader(directory: upgraded.sub("log"), payloadCodec: EventCodec.blockCodec).events()
        while let event = try newCursor.next() { newEvents.append(event) }
        #expect(newEvents.count == 27)
        #expect(newEvents == oldEvents, "every event: sequence, time and bytes")
        for sequence in UInt64(0)...27 {
            #expect(try after.state(at: sequence) == before.state(at: sequence), "the state at \(sequence)")
        }

        // Opening uses the snapshot the upgrade wrote at the end, not the format-1 ones.
        let store = try await TouristStore.open(at: upgraded.path, options: options)
        #expect(store.report.snapshot == 27 && store.report.replayedEvents == 0)
        StoreFixtureTests().expectTheFixtureState(store.state)
        try await store.close()
        let verified = try StoreAudit.verify(folder: upgraded.path, checkPhotoContents: false)
        #expect(verified.log.format == .v2 && verified.log.events == 27)
        // The fixture commits no photo files; apart from that one photo, nothing is wrong.
        #expect(verified.problems.count == 1 && verified.problems.allSatisfy { $0.contains("missing from") }, "\(verified.problems)")
        #expect(try after.snapshotSequences() == [27], "the format-1 snapshots went with the format-1 log")

        // A second upgrade is refused with a clear error and changes nothing.
        await #expect(throws: DomainError.self) { _ = try await TouristStore.upgrade(at: upgraded.path, options: options) }
        #expect(try LogReader(directory: upgraded.sub("log"), payloadCodec: EventCodec.blockCodec).lastSequence() == 27)
    }
}
