import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// The check every reliability test relies on
/// (``violations(ofStoreAt:fileSystem:acknowledged:written:checkpoint:)``) finds what it is
/// there to find: a check that passed everything would prove nothing.
@Suite struct StoreInvariantsTests {
    let folder = PowerLossTests.folder

    /// A store after the mixed workload, its acknowledged events, and a checkpoint of it.
    func soundStore(seed: UInt64) async throws -> (SimulatedDisk, [UInt64: String], StoreCheckpoint) {
        let disk = SimulatedDisk(root: "/disk")
        let run = await PowerLossTests.run(on: disk, seed: seed)
        #expect(run.errors.isEmpty)
        var checkpoint: StoreCheckpoint?
        let found = await violations(
            ofStoreAt: folder, fileSystem: disk, acknowledged: run.acknowledged, written: nil, checkpoint: &checkpoint)
        #expect(found.isEmpty, "\(found)")
        return (disk, run.acknowledged, try #require(checkpoint))
    }

    @Test func lostChangedAndReorderedEventsAreFound() async throws {
        let (disk, acknowledged, _) = try await soundStore(seed: 8)
        let written = try #require(writtenEvents(inStoreAt: folder, fileSystem: disk))
        let end = UInt64(written.count)

        var beyond = acknowledged
        beyond[end + 3] = "an event the store never wrote"
        let lost = await violations(ofStoreAt: folder, fileSystem: disk, acknowledged: beyond, written: nil)
        #expect(lost.contains { $0.contains("acknowledged event \(end + 3) is lost") }, "\(lost)")

        var other = acknowledged
        let first = try #require(acknowledged.keys.min())
        other[first] = "another fingerprint"
        let changed = await violations(ofStoreAt: folder, fileSystem: disk, acknowledged: other, written: nil)
        #expect(changed == ["acknowledged event \(first) changed"])

        var reordered = written
        reordered.swapAt(2, 3)
        let notAPrefix = await violations(ofStoreAt: folder, fileSystem: disk, acknowledged: [:], written: reordered)
        #expect(notAPrefix.contains { $0.contains("is not a prefix of what was written") }, "\(notAPrefix)")
    }

    @Test func aCheckpointOfAnotherLogOrAWrongStateIsFound() async throws {
        let (disk, acknowledged, checkpoint) = try await soundStore(seed: 8)
        let (_, _, elsewhere) = try await soundStore(seed: 9)
        #expect(elsewhere.head != checkpoint.head)

        var foreign: StoreCheckpoint? = StoreCheckpoint(head: elsewhere.head, state: checkpoint.state)
        let changed = await violations(
            ofStoreAt: folder, fileSystem: disk, acknowledged: acknowledged, written: nil, checkpoint: &foreign)
        #expect(changed.contains { $0.contains("checked before, changed") }, "\(changed)")

        var wrongState: StoreCheckpoint? = StoreCheckpoint(head: checkpoint.head, state: TouristState())
        let differs = await violations(
            ofStoreAt: folder, fileSystem: disk, acknowledged: acknowledged, written: nil, checkpoint: &wrongState)
        #expect(differs.contains("the state differs from a fresh fold of the log"), "\(differs)")
        #expect(wrongState?.state == TouristState(), "a failed check leaves no new checkpoint")

        // From the right checkpoint, the same store is sound, and the checkpoint moves on.
        var right: StoreCheckpoint? = checkpoint
        let sound = await violations(
            ofStoreAt: folder, fileSystem: disk, acknowledged: acknowledged, written: nil, checkpoint: &right)
        #expect(sound.isEmpty, "\(sound)")
        #expect(try #require(right).head.sequence > checkpoint.head.sequence)
    }
}
