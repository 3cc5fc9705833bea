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

/// A format-1 store opened to write (by an app, which writes format 2 only) is refused with a
/// clear error that says how to convert it, and nothing in the store changes; reading it, and
/// upgrading it, still work.
@Suite struct Format1WriteRefusalTests {
    /// Every file under `folder` (relative path → bytes).
    static func contents(of folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + path))
            }
        }
        return files
    }

    @Test func openingAFormat1StoreToWriteSaysToUpgradeAndChangesNothing() async throws {
        let folder = TemporaryFolder("format1-refused")
        try FileManager.default.copyItem(atPath: StoreFixtureTests.fixture, toPath: folder.path)
        let before = try Self.contents(of: folder.path)

        let refusal = await #expect(throws: DomainError.self) { try await TouristStore.open(at: folder.path) }
        #expect(refusal?.code == .needsUpgrade)
        #expect(refusal?.message.contains("vt upgrade --store \(folder.path)") == true, "\(refusal?.message ?? "")")
        // The log itself says the same to any program that embeds it.
        let logError = #expect(throws: LogError.self) { try EventLog.open(at: folder.sub("log")) }
        #expect(logError?.code == .needsUpgrade)
        #expect(try Self.contents(of: folder.path) == before, "nothing in the store changed")

        // Reading it still works, and so does the upgrade; then it opens to write.
        #expect(try StoreReader.open(at: folder.path).state(at: 27).sequence == 27)
        _ = try await TouristStore.upgrade(at: folder.path)
        let store = try await TouristStore.open(at: folder.path)
        #expect(store.state.sequence == 27 && store.logFormat == .v2)
        try await store.close()
    }
}
