import SeededRandom
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// ``PinTable`` is a dictionary cut into shards: held here to a `Dictionary` doing the same,
/// copies included (a copy taken before a change must not see it, whichever shard it lands in).
@Suite(.heavy) struct PinTableTests {
    static func pin(_ id: PinID, _ step: Int) -> Pin {
        Pin(id: id, coordinate: Coordinate(latitude: Double(step % 170) - 85, longitude: 10), droppedAt: UInt64(step), album: Album())
    }

    /// Random inserts, removals and changes in place (through the subscript, `modify`,
    /// `updateValue`, `removeValue`), checked against a dictionary after every step; copies
    /// taken along the way are checked against the dictionary's copies at the end.
    @Test(arguments: [(UInt64(1), 30, false), (2, 400, false), (3, 3_000, false), (4, 300, true), (5, 2_000, true)])
    func behavesLikeADictionaryOverRandomChanges(seed: UInt64, distinct: Int, randomIDs: Bool) {
        var random = SplitMix(seed: seed)
        // The tests' generator counts from 1; the system's is random.
        let ids = (0..<UInt64(distinct)).map { PinID(randomIDs ? random.next() | 1 : $0 + 1) }
        var table = PinTable()
        var model: [PinID: Pin] = [:]
        var copies: [(PinTable, [PinID: Pin])] = []
        for step in 0..<(distinct * 8) {
            let id = ids[Int(random.next() % UInt64(distinct))]
            switch random.next() % 8 {
            case 0, 1:
                table[id] = Self.pin(id, step)
                model[id] = Self.pin(id, step)
            case 2:
                #expect(table.updateValue(Self.pin(id, step), forKey: id) == model.updateValue(Self.pin(id, step), forKey: id), "seed \(seed), step \(step)")
            case 3:
                table[id] = nil
                model[id] = nil
            case 4:
                #expect(table.removeValue(forKey: id) == model.removeValue(forKey: id), "seed \(seed), step \(step)")
            case 5:
                table[id]?.coordinate = Coordinate(latitude: 1, longitude: Double(step % 300) - 150)
                model[id]?.coordinate = Coordinate(latitude: 1, longitude: Double(step % 300) - 150)
            case 6:
                let changed = table.modify(id) { pin in
                    pin.album = Album(collection: UInt32(step))
                    return pin.droppedAt
                }
                #expect(changed == model[id]?.droppedAt, "seed \(seed), step \(step)")
                model[id]?.album = Album(collection: UInt32(step))
            default:
                if copies.count < 12 { copies.append((table, model)) }
            }
            #expect(table.count == model.count && table.isEmpty == model.isEmpty, "seed \(seed), step \(step)")
            if step % 11 == 0 || distinct <= 30 {
                #expect(ids.allSatisfy { table[$0] == model[$0] && table.contains($0) == (model[$0] != nil) }, "seed \(seed), step \(step)")
                #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == model, "seed \(seed), step \(step)")
            }
        }
        for (index, (copy, modelCopy)) in copies.enumerated() {
            #expect(Dictionary(uniqueKeysWithValues: copy.map { ($0.key, $0.value) }) == modelCopy, "seed \(seed), copy \(index)")
            #expect(copy.count == modelCopy.count, "seed \(seed), copy \(index)")
        }
        #expect(Set(table.keys) == Set(model.keys) && Set(table.values.map(\.id)) == Set(model.values.map(\.id)))
        #expect(table.mapValues(\.droppedAt) == model.mapValues(\.droppedAt))
        #expect(copies.count > 3 && !model.isEmpty, "seed \(seed): the sequence left something to compare")
    }

    /// Equal contents are equal and hash alike, whatever order built them and whatever room
    /// was reserved; one pin different is not equal; empty tables are equal however they got so.
    @Test func equalityIgnoresOrderAndCapacity() {
        let pins = (1...500).map { Self.pin(PinID($0), Int($0)) }
        var forward = PinTable()
        for pin in pins { forward[pin.id] = pin }
        var backward = PinTable()
        backward.reserveCapacity(10_000)
        for pin in pins.reversed() { backward.updateValue(pin, forKey: pin.id) }
        #expect(forward == backward && forward.hashValue == backward.hashValue)
        backward[PinID(7)]!.coordinate = Coordinate(latitude: 3, longitude: 3)
        #expect(forward != backward)
        for pin in pins { backward[pin.id] = nil }
        #expect(backward == PinTable() && backward.hashValue == PinTable().hashValue && backward.isEmpty)
        let literal: PinTable = [PinID(1): pins[0], PinID(2): pins[1]]
        #expect(literal.count == 2 && literal[PinID(2)] == pins[1] && literal[PinID(3)] == nil)
    }

    /// `modifyAll` reaches every pin once and leaves a copy taken before it alone; `read` and
    /// `modify` of a pin that is not there give nil and change nothing.
    @Test func changingEveryPinLeavesCopiesAlone() {
        var table = PinTable()
        for id in 1...1_000 { table[PinID(UInt64(id))] = Self.pin(PinID(UInt64(id)), id) }
        let before = table
        var visits = 0
        table.modifyAll { pin in
            visits += 1
            pin.album = Album(collection: 9)
        }
        #expect(visits == 1_000)
        #expect(table.allSatisfy { $0.value.album.collection == 9 })
        #expect(before.allSatisfy { $0.value.album.collection == 1 } && before.count == 1_000)
        #expect(table.read(PinID(5_000)) { $0.droppedAt } == nil && table.read(PinID(5)) { $0.droppedAt } == 5)
        #expect(table.modify(PinID(5_000)) { $0.album = Album() } == nil && table.count == 1_000)
        #expect(PinTable().read(PinID(1)) { $0.id } == nil && !PinTable().contains(PinID(1)))
    }
}
