import SeededRandom
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// ``PhotoReferences`` is a hash table of its own: held here to a `Dictionary` doing the same.
@Suite(.heavy) struct PhotoReferencesTests {
    /// Digests whose four words cancel out in ``BlobDigest/foldedWord`` (two equal pairs), so
    /// they all start probing at the same slot: the worst case for runs and for removal.
    static func colliding(_ seed: UInt64) -> PhotoDigest {
        let words = [seed, seed, seed &* 3, seed &* 3]
        return PhotoDigest(bytes: words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } })!
    }

    static func spread(_ seed: UInt64) -> PhotoDigest { arbitraryDigest(seed) }

    /// Random adds, releases, sets and removals, checked against a dictionary after every step:
    /// lookups of every digest ever used, the count, and the whole contents.
    @Test(arguments: [(40, false), (300, false), (3_000, false), (40, true), (200, true)])
    func behavesLikeADictionaryOverRandomChanges(distinct: Int, colliding: Bool) {
        var random = SplitMix(seed: UInt64(distinct) * (colliding ? 7 : 1))
        let digests = (0..<UInt64(distinct)).map { colliding ? Self.colliding($0 + 1) : Self.spread($0) }
        var table = PhotoReferences()
        var model: [PhotoDigest: Int] = [:]
        for step in 0..<(distinct * 12) {
            let digest = digests[Int(random.next() % UInt64(distinct))]
            switch random.next() % 8 {
            case 0, 1, 2:
                table.add(digest)
                model[digest, default: 0] += 1
            case 3, 4, 5:
                table.release(digest)
                if let count = model[digest] { model[digest] = count > 1 ? count - 1 : nil }
            case 6:
                let count = Int(random.next() % 4)  // 0 removes
                table[digest] = count
                model[digest] = count == 0 ? nil : count
            default:
                table[digest] = nil
                model[digest] = nil
            }
            #expect(table.count == model.count, "step \(step)")
            if step % 7 == 0 || distinct <= 40 {
                #expect(digests.allSatisfy { table[$0] == model[$0] }, "step \(step)")
                #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.digest, $0.count) }) == model, "step \(step)")
            }
        }
        #expect(Set(table.keys) == Set(model.keys))
        #expect(!model.isEmpty, "the sequence left something to compare")
    }

    /// Equal contents are equal and hash alike, whatever order built them and whatever room
    /// the tables had; a different count is not equal.
    @Test func equalityIgnoresOrderAndCapacity() {
        let digests = (0..<500).map { Self.spread($0) }
        var forward = PhotoReferences()
        for digest in digests { forward.add(digest) }
        var backward = PhotoReferences(minimumCapacity: 10_000)
        for digest in digests.reversed() { backward.add(digest) }
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        backward.add(digests[7])
        #expect(forward != backward)
        backward.release(digests[7])
        backward.release(digests[8])
        backward.add(digests[9])
        #expect(forward != backward, "same digest count, different counts")
        #expect(([Self.spread(1): 2] as PhotoReferences)[Self.spread(1)] == 2)
    }

    /// Reserving room keeps the contents; releasing an unknown digest changes nothing.
    @Test func reservingAndReleasingUnknownDigestsKeepTheContents() {
        var table: PhotoReferences = [Self.colliding(1): 1, Self.colliding(2): 3]
        let before = table
        table.reserveCapacity(100_000)
        table.release(Self.colliding(3))
        table.release(Self.spread(3))
        #expect(table == before && table.count == 2)
        #expect(table[Self.colliding(2)] == 3 && table[Self.colliding(3)] == nil)
        #expect(PhotoReferences().isEmpty && PhotoReferences()[Self.spread(1)] == nil)
    }
}
