import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// `vt history`: finding a pin by what people type, on the map or long gone, and reading every
/// event about it without decoding the rest of the log.
@Suite(.heavy) struct HistoryTests {
    /// A long range is read as two halves by two readers on two cores: wherever the cut falls
    /// (every threshold down to splitting a range of two), the halves join to the same events
    /// in the same order, none lost at the cut and none read twice.
    @Test func aHistoryReadInTwoHalvesIsTheSameHistory() async throws {
        let (folder, story) = try await TimeTravelTests.closedStore("history-halves", seed: 55, events: 500, snapshotInterval: 97)
        let reader = try StoreReader.open(at: folder.path)
        let pins = Set(story.events.compactMap(\.event.pin))
        for pin in pins {
            let events = story.events.filter { $0.event.pin == pin }
            let start = events.first!.sequence
            for threshold in [1, 2, 7, 100, 501] as [UInt64] {
                let halves = try reader.history(of: pin, from: start, halvingAt: threshold)
                #expect(halves.map(\.sequence) == events.map(\.sequence), "pin \(pin), halves from \(threshold) events")
                #expect(halves.map(\.event) == events.map(\.event))
            }
        }
        #expect(try reader.history(of: pins.first!, from: 500, halvingAt: 1).count <= 1)
        #expect(try reader.history(of: pins.first!, from: 501, halvingAt: 1).isEmpty)
    }

    /// `vt history` finds the pin and its drop from the newest snapshot's pins alone, albums
    /// left undecoded, then the events since. With the newest snapshots taken away one by one
    /// (so that more and more of the log is folded on a state without albums), the pins and
    /// drops found are always the full state's.
    @Test func thePinsOnTheMapAreFoundWithoutDecodingAlbums() async throws {
        let (folder, story) = try await TimeTravelTests.closedStore("pins-on-map", seed: 56, events: 600, snapshotInterval: 53)
        let expected = fold(story.events).pins.mapValues(\.droppedAt)
        #expect(expected.count > 1)
        var removed = 0
        while true {
            let reader = try StoreReader.open(at: folder.path)
            #expect(try reader.pinsOnMap() == expected, "with \(removed) snapshots taken away")
            for (pin, droppedAt) in expected.prefix(3) {
                let found = try reader.pinAndDrop(matching: pin.description)
                #expect(found.pin == pin && found.droppedAt == droppedAt)
            }
            guard let newest = try reader.snapshotSequences().last else { break }
            try FileManager.default.removeItem(atPath: folder.path + "/snapshots/" + SnapshotFile.name(for: newest))
            removed += 1
        }
        #expect(removed > 5)
        let gone = Set(story.events.compactMap(\.event.pin)).subtracting(expected.keys)
        let reader = try StoreReader.open(at: folder.path)
        for pin in gone.prefix(3) {
            let found = try reader.pinAndDrop(matching: pin.description)
            #expect(found.pin == pin && found.droppedAt == nil, "a removed pin is found among the dropped ones")
        }
    }

    /// A pin that is gone is found in one pass that decodes only events holding the bytes its
    /// prefix fixes. Ids chosen so that prefixes share bytes: each pin's whole id, a unique
    /// prefix, and an ambiguous one, in halves and not.
    @Test func aGonePinIsFoundByAnyUniquePrefixWithEveryEventAboutIt() async throws {
        let folder = TemporaryFolder("history-gone")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        let ids: [UInt64] = [0x6280_938a_d5a1_04f2, 0x6280_938a_0000_0001, 0x1234_5678_9abc_def0, 0x0000_0000_0000_0007]
        let place = Coordinate(latitude: 10, longitude: 20)
        for (index, id) in ids.enumerated() {
            try await store.record(.pinDropped(PinID(id), place))
            try await store.record(.pinDragged(PinID(id), Coordinate(latitude: Double(index), longitude: 1)))
            _ = try await store.dropPin(at: place)  // noise: a pin that stays
        }
        for id in ids { try await store.record(.pinRemoved(PinID(id))) }
        try await store.record(.pinDropped(PinID(ids[0]), place))  // dropped again, and removed again
        try await store.record(.pinRemoved(PinID(ids[0])))
        try await store.close()

        let reader = try StoreReader.open(at: folder.path)
        #expect(try reader.pinsOnMap().count == ids.count)
        for id in ids {
            let pin = PinID(id)
            let expected = try allEvents(reader).filter { $0.event.pin == pin }
            #expect(expected.count >= 3)
            for threshold in [1, 1 << 16] as [UInt64] {
                let found = try reader.removedPin(matching: pin.description, halvingAt: threshold)
                #expect(found.pin == pin && found.events.map(\.sequence) == expected.map(\.sequence), "\(pin), halves from \(threshold)")
            }
            #expect(try reader.history(matching: pin.description.uppercased()).events.map(\.sequence) == expected.map(\.sequence))
            #expect(try reader.pin(matching: pin.description) == pin)
            let later = try reader.events(aboutPinMatching: pin.description, from: expected[1].sequence)
            #expect(later.pin == pin && later.events.map(\.sequence) == expected.dropFirst().map(\.sequence), "vt log --pin \(pin) --from")
            let earlier = try reader.events(aboutPinMatching: pin.description, through: expected[1].sequence)
            #expect(earlier.events.map(\.sequence) == expected.prefix(2).map(\.sequence), "vt log --pin \(pin) --to")
        }
        // A pin on the map, by its events in a range.
        let staying = try #require(try reader.pinsOnMap().first)
        let stayingEvents = try allEvents(reader).filter { $0.event.pin == staying.key }
        let ranged = try reader.events(aboutPinMatching: staying.key.description, from: staying.value, through: stayingEvents.last!.sequence)
        #expect(ranged.pin == staying.key && ranged.events.map(\.sequence) == stayingEvents.map(\.sequence))
        #expect(try reader.history(matching: "6280938ad").pin == PinID(ids[0]))
        #expect(try reader.history(matching: "6280938a0").pin == PinID(ids[1]))
        #expect(try reader.history(matching: "12345").pin == PinID(ids[2]))
        await expectDomainError(.invalidArgument) { try reader.history(matching: "6280938a") }  // two pins
        await expectDomainError(.unknownPin) { try reader.history(matching: "62809388") }
        await expectDomainError(.unknownPin) { try reader.history(matching: "00000000000000070") }  // 17 digits
        await expectDomainError(.invalidArgument) { try reader.history(matching: "628") }
        await expectDomainError(.invalidArgument) { try reader.history(matching: "pin!") }
    }

    @Test func aPrefixFixesTheLastBytesOfTheIdOnTheWire() {
        #expect(StoreReader.wireBytes(ofIDPrefix: "6280938a") == [0x8a, 0x93, 0x80, 0x62])
        #expect(StoreReader.wireBytes(ofIDPrefix: "6280938ad") == [0x8a, 0x93, 0x80, 0x62])
        #expect(StoreReader.wireBytes(ofIDPrefix: "abc") == [0xab])
        #expect(StoreReader.wireBytes(ofIDPrefix: "0000") == nil, "a zero id has no bytes on the wire")
        #expect(StoreReader.wireBytes(ofIDPrefix: "a") == nil)
        let id: UInt64 = 0x6280_938a_d5a1_04f2
        let wire = withUnsafeBytes(of: id.littleEndian) { Array($0) }
        for digits in 2...16 {
            let bytes = StoreReader.wireBytes(ofIDPrefix: String(PinID(id).description.prefix(digits)))!
            #expect(Array(wire.suffix(bytes.count)) == bytes, "\(digits) digits")
        }
    }

    @Test func theBytesSearchFindsNeedlesOfAnyLength() {
        for needle in [[7], [7, 1], [7, 1, 2], [7, 7, 7, 9, 9, 9, 9, 9, 1]] as [[UInt8]] {
            for length in 0..<24 {
                let noise = [UInt8](repeating: 7, count: length)  // every byte a candidate, never the rest
                #expect(!StoreReader.payload(noise[...], contains: needle) || needle.allSatisfy { $0 == 7 })
                for offset in 0...length {
                    var payload = noise
                    payload.insert(contentsOf: needle, at: offset)
                    #expect(StoreReader.payload(payload[...], contains: needle), "\(needle) at \(offset) of \(length)")
                }
            }
        }
    }

    /// Compaction records the pins each block's events name (docs/FORMAT.md, "Key summaries"),
    /// and a history reads only the blocks that name its pin: the same events as reading every
    /// block, from a small part of the log. The key recorded is, for every event of a story, the
    /// pin its decoded form names.
    @Test func aHistoryReadsOnlyTheBlocksThatNameItsPin() async throws {
        let folder = TemporaryFolder("history-keys")
        let story = try await compactedStore(in: folder, seed: 57, count: 1_500)

        let log = try LogReader(directory: folder.path + "/log", payloadCodec: EventCodec.blockCodec)
        let cursor = try log.events()
        var keyed = 0
        while let event = try cursor.next() {
            let decoded = try EventCodec.decode(event)
            #expect(EventCodec.pinKey(of: event.payload) == decoded.event.pin?.rawValue, "event \(event.sequence)")
            keyed += decoded.event.pin == nil ? 0 : 1
        }
        #expect(keyed > 1_000)

        let reader = try StoreReader.open(at: folder.path)
        let last = reader.lastSequence
        let pins = Set(story.events.compactMap(\.event.pin))
        #expect(pins.count > 5)
        var read: UInt64 = 0
        for pin in pins {
            let expected = story.events.filter { $0.event.pin == pin }
            #expect(try reader.history(of: pin).map(\.sequence) == expected.map(\.sequence), "pin \(pin)")
            let ranges = try log.ranges(mayHoldKeysIn: pin.rawValue...pin.rawValue, function: EventCodec.pinKeys.name, from: 1, through: last)
            read += ranges.reduce(0) { $0 + $1.upperBound - $1.lowerBound + 1 }
        }
        #expect(read < UInt64(pins.count) * last / 2, "\(read) events read for \(pins.count) pins of \(last)")

        // Without the summaries, the same histories, by any prefix, from every block.
        let found = try pins.sorted { $0.rawValue < $1.rawValue }.prefix(8).map { try reader.history(matching: $0.description) }
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path + "/log") where name.hasSuffix(".keys") {
            try FileManager.default.removeItem(atPath: folder.path + "/log/" + name)
        }
        let whole = try StoreReader.open(at: folder.path)
        for (pin, events) in found {
            #expect(try whole.history(matching: pin.description).events.map(\.sequence) == events.map(\.sequence))
            #expect(try whole.history(of: pin).map(\.sequence) == events.map(\.sequence))
        }
    }

    /// Payloads the app never writes but a log may hold (from another writer, or restored from
    /// a stream): the key is still the pin the decoder finds, so a summary never leaves out a
    /// block that holds the pin's event. Two envelopes back to back decode as the second
    /// event (protobuf merges them); an unknown group before the event is skipped; a pin field
    /// written twice decodes as its last value.
    @Test func aPinKeyIsThePinTheDecoderFindsInPayloadsTheAppNeverWrites() throws {
        let first = PinID(0x1111_2222_3333_4444), second = PinID(0x5555_6666_7777_8888)
        let dropped = EventCodec.encode(.pinDropped(first, Coordinate(latitude: 48.8584, longitude: 2.2945)), cause: nil)
        let removed = EventCodec.encode(.pinRemoved(second), cause: nil)
        var twice: [UInt8] = [0x08, 0x01, 0x6A, 18, 0x09]  // schema 1; pin_removed, 18 bytes: pin, pin
        twice += withUnsafeBytes(of: first.rawValue.littleEndian, Array.init) + [0x09]
        twice += withUnsafeBytes(of: second.rawValue.littleEndian, Array.init)
        let cases: [(String, [UInt8], PinID)] = [
            ("two envelopes", dropped + removed, second),
            ("an unknown group first", [0x2B, 0x2C] + removed, second),
            ("the pin twice", twice, second),
            ("as the app writes it", dropped, first),
        ]
        for (what, payload, pin) in cases {
            let decoded = try EventCodec.decode(LogEvent(sequence: 1, timestamp: LogTimestamp(microsecondsSinceEpoch: 0), payload: payload[...]))
            #expect(decoded.event.pin == pin, "\(what): the case tests what it says")
            #expect(EventCodec.pinKey(of: payload[...]) == pin.rawValue, "\(what)")
        }
        #expect(EventCodec.pinKey(of: [0x2B][...]) == nil, "a payload that does not parse names no pin")
    }
}
