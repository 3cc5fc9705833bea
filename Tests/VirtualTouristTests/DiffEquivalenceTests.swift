import BlobStore
import EventLog
import StorageTestSupport
import Testing
import TouristWorkload
@testable import VirtualTourist

/// `difference(to:)` walks both states' albums in slot order instead of building a table of
/// every photo of each (docs/BENCHMARKS-JOURNAL.md, "vt diff"). Its answers must not have moved: the
/// way it stood before (`referenceDifference`, kept here) and today's are compared on pairs of
/// states along the benchmark workload, near and far apart, in both directions.
@Suite(.heavy) struct DiffEquivalenceTests {
    @Test func theWalkingDiffGivesTheReferenceDiffAlongTheWorkload() {
        var workload = Workload(seed: 2026, livePins: 40)
        let states = workload.states(every: 1_500, until: 40_000)
        var photosCompared = 0
        for (a, b) in zip(states.indices, states.indices.dropFirst()) + [(1, states.count - 1), (3, 17), (states.count - 1, 2)] {
            for (from, to) in [(states[a], states[b]), (states[b], states[a])] {
                let diff = from.difference(to: to)
                let reference = Self.referenceDifference(from, to)
                // Compared as one Bool: printed, two diffs of thousands of photos drown the log.
                let same = diff == reference
                #expect(same, "from \(from.sequence) to \(to.sequence): \(diff.photosAdded.count) and \(diff.photosRemoved.count) photos, the reference \(reference.photosAdded.count) and \(reference.photosRemoved.count)")
                // The lists made on two cores, whatever the states' size.
                let onTwoCores = from.difference(to: to, twoCoresFrom: 0) == reference
                #expect(onTwoCores, "on two cores, from \(from.sequence) to \(to.sequence)")
                photosCompared += diff.photosAdded.count + diff.photosRemoved.count
            }
        }
        #expect(photosCompared > 10_000, "the pairs differ by many photos")
    }

    /// The difference as it was computed before: a table of each state's downloaded photos.
    static func referenceDifference(_ before: TouristState, _ after: TouristState) -> StateDiff {
        struct Key: Hashable {
            var pin: PinID
            var collection: UInt32
            var slot: UInt32
            var digest: PhotoDigest
        }
        func list(_ state: TouristState) -> [(key: Key, photo: StateDiff.Photo)] {
            state.pinsInDropOrder.flatMap { pin in
                pin.album.slots.compactMap { slot in
                    guard let digest = slot.digest else { return nil }
                    return (Key(pin: pin.id, collection: pin.album.collection, slot: slot.number, digest: digest),
                            StateDiff.Photo(pin: pin.id, collection: pin.album.collection, slot: slot))
                }
            }
        }
        var diff = StateDiff(from: before.sequence, to: after.sequence)
        if before.region != after.region { diff.region = .init(before: before.region, after: after.region) }
        diff.pinsAdded = after.pinsInDropOrder.filter { before.pins[$0.id] == nil }
        diff.pinsRemoved = before.pinsInDropOrder.filter { after.pins[$0.id] == nil }
        diff.pinsMoved = before.pinsInDropOrder.compactMap { pin in
            guard let moved = after.pins[pin.id], moved.coordinate != pin.coordinate else { return nil }
            return .init(pin: pin.id, from: pin.coordinate, to: moved.coordinate)
        }
        let beforeKeys = Set(list(before).map(\.key))
        let afterKeys = Set(list(after).map(\.key))
        diff.photosAdded = list(after).filter { !beforeKeys.contains($0.key) }.map(\.photo)
        diff.photosRemoved = list(before).filter { !afterKeys.contains($0.key) }.map(\.photo)
        return diff
    }
}
