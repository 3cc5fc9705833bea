import EventLog
import Foundation

/// One pin's story: which pin a text names, and every event about it.
extension StoreReader {
    /// Every event about `pin`, oldest first, from `start` on (empty for a pin that never
    /// existed). Pass the pin's `droppedAt` when known, to skip the log before it.
    ///
    /// Only the blocks whose key summary names the pin are read (docs/FORMAT.md, "Key
    /// summaries"; all of a block file without one, and the hot tail). Every event about a pin
    /// carries its id as a `fixed64` (schemas/…/events.proto), so an event whose payload lacks
    /// those eight bytes is not decoded at all. A long read is cut in two halves read on two
    /// cores (docs/BENCHMARKS.md).
    public func history(of pin: PinID, from start: UInt64 = 1) throws -> [RecordedEvent] {
        try history(of: pin, from: start, halvingAt: Self.halvingThreshold)
    }

    /// Every event about `pin` from `start` through `through`, oldest first: the blocks after
    /// `through` are not read (time travel's questions about a point).
    public func history(of pin: PinID, from start: UInt64 = 1, through: UInt64) throws -> [RecordedEvent] {
        try history(of: pin, from: start, through: through, halvingAt: Self.halvingThreshold)
    }

    /// The same through `through` (default: this reader's last), read in halves from
    /// `threshold` events on (tests split short ranges too).
    func history(of pin: PinID, from start: UInt64, through: UInt64? = nil, halvingAt threshold: UInt64) throws -> [RecordedEvent] {
        let wanted = Self.filter(about: pin)
        let from = max(1, start)
        let through = min(through ?? lastSequence, lastSequence)
        guard through >= from else { return [] }
        do {
            return try events(aboutPinsIn: pin.rawValue...pin.rawValue, from: from, through: through, threshold: threshold, decodingOnly: wanted) {
                $0 == pin
            }
        } catch {
            throw TouristStore.storageError(error, "the history of pin \(pin) cannot be read")
        }
    }

    /// Turns down the events whose stored bytes cannot be about `pin`; nil for pin 0, which has
    /// no bytes on the wire (proto3 leaves a zero out), so every event is decoded.
    static func filter(about pin: PinID) -> (@Sendable (LogEvent) -> Bool)? {
        guard pin.rawValue != 0 else { return nil }
        let id = withUnsafeBytes(of: pin.rawValue.littleEndian) { [UInt8]($0) }
        return { Self.payload($0.payload, contains: id) }
    }

    /// Whether the bytes of `needle` occur in `payload`: `memchr` for the first byte (for a pin
    /// id's bytes, a random byte, so rarely more than one candidate an event), then the rest.
    static func payload(_ payload: ArraySlice<UInt8>, contains needle: [UInt8]) -> Bool {
        precondition(!needle.isEmpty)
        return payload.withUnsafeBytes { bytes in
            needle.withUnsafeBytes { wanted in
                guard bytes.count >= wanted.count, let base = bytes.baseAddress else { return false }
                var from = 0
                let last = bytes.count - wanted.count
                while from <= last {
                    guard let found = memchr(base + from, Int32(wanted[0]), last - from + 1) else { return false }
                    let at = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(base + at, wanted.baseAddress!, wanted.count) == 0 { return true }
                    from = at + 1
                }
                return false
            }
        }
    }

    /// The pin `text` names among the pins on the map now or, failing that, every pin the log
    /// ever dropped (so removed pins can be asked about).
    public func pin(matching text: String) throws -> PinID {
        try pinAndDrop(matching: text).pin
    }

    /// The same, with the sequence number of its drop when the pin is on the map now (where its
    /// history starts); nil for a removed pin.
    public func pinAndDrop(matching text: String) throws -> (pin: PinID, droppedAt: UInt64?) {
        switch try named(text) {
        case .onMap(let pin, let droppedAt): (pin, droppedAt)
        case .gone(let pin, _): (pin, nil)
        }
    }

    /// The pin `text` names and every event about it, oldest first: from its drop for a pin on
    /// the map, in one filtered pass over the whole log for one that is gone.
    public func history(matching text: String) throws -> (pin: PinID, events: [RecordedEvent]) {
        switch try named(text) {
        case .onMap(let pin, let droppedAt): (pin, try history(of: pin, from: droppedAt))
        case .gone(let pin, let events): (pin, events)
        }
    }

    /// The pin `text` names and its events from `from` through `through` (default: this
    /// reader's last), oldest first (`vt log --pin`): one filtered pass for a pin that is gone,
    /// which both finds the pin and reads its events.
    public func events(aboutPinMatching text: String, from: UInt64 = 1, through: UInt64? = nil) throws -> (pin: PinID, events: [RecordedEvent]) {
        let through = min(through ?? lastSequence, lastSequence)
        switch try named(text) {
        case .onMap(let pin, _):
            return (pin, try history(of: pin, from: from, through: through, halvingAt: Self.halvingThreshold))
        case .gone(let pin, let events):
            return (pin, events.filter { $0.sequence >= from && $0.sequence <= through })
        }
    }

    /// What `text` names: a pin on the map now, with its drop, or else a pin the log once
    /// dropped, with every event about it (the one pass that finds it reads them).
    private enum NamedPin {
        case onMap(PinID, droppedAt: UInt64)
        case gone(PinID, events: [RecordedEvent])
    }

    private func named(_ text: String) throws -> NamedPin {
        let onMap = try pinsOnMap()
        do {
            let pin = PinID(parsing: try TouristState.resolve(text, among: onMap.keys.map(\.description), what: "pin"))!
            return .onMap(pin, droppedAt: onMap[pin]!)
        } catch let error as DomainError where error.code == .unknownPin {
            let (pin, events) = try removedPin(matching: text)
            return .gone(pin, events: events)
        }
    }

    /// Among the pins the log ever dropped (or forgot) whose id starts with `text`, the only
    /// one, with every event about it.
    ///
    /// One pass over the blocks whose key summary names a pin with that prefix (and any block
    /// file without a summary, and the hot tail), in halves on two cores, decoding only the events whose payload
    /// holds the bytes the prefix fixes: a pin id is a `fixed64` on the wire, little-endian, so
    /// its leading hex digits are the last bytes of the eight. At 10 M events, listing every
    /// dropped pin first and then reading the history meant two passes that decoded everything
    /// (docs/BENCHMARKS.md).
    ///
    /// `text` has passed a lookup among the pins on the map (``TouristState/resolve(_:among:what:)``
    /// checks that it is a hex prefix long enough), which found none.
    ///
    /// - Throws: ``DomainError`` `.unknownPin` when no dropped pin matches, `.invalidArgument`
    ///   when several do.
    func removedPin(matching text: String, halvingAt threshold: UInt64 = halvingThreshold) throws -> (pin: PinID, events: [RecordedEvent]) {
        let wanted = text.lowercased()
        guard wanted.utf8.count <= 16 else { throw DomainError(.unknownPin, "no pin id starts with \(wanted.prefix(40)): pin ids have 16 digits") }
        let fixedBytes = Self.wireBytes(ofIDPrefix: wanted)
        let filter = fixedBytes.map { bytes in { (event: LogEvent) in Self.payload(event.payload, contains: bytes) } }
        var events: [RecordedEvent] = []
        if lastSequence > 0 {
            do {
                events = try self.events(
                    aboutPinsIn: Self.pinIDs(startingWith: wanted), from: 1, through: lastSequence, threshold: threshold,
                    decodingOnly: filter
                ) { $0.description.hasPrefix(wanted) }
            } catch {
                throw TouristStore.storageError(error, "the pins matching \(wanted) cannot be read")
            }
        }
        var dropped = Set<PinID>()
        for recorded in events {
            switch recorded.event {
            case .pinDropped(let pin, _), .placeForgotten(let pin, _): dropped.insert(pin)
            default: break
            }
        }
        let pin = PinID(parsing: try TouristState.resolve(wanted, among: dropped.map(\.description), what: "pin"))!
        return (pin, events.filter { $0.event.pin == pin })
    }

    /// The bytes a hex prefix of a pin id fixes, in wire order (the id's last bytes, reversed);
    /// nil when they cannot filter: fewer than one whole byte, or all zero (proto3 writes no
    /// bytes for a zero id, so pin 0 would be missed).
    static func wireBytes(ofIDPrefix prefix: String) -> [UInt8]? {
        let digits = Array(prefix.utf8.prefix(16))
        let whole = digits.count / 2
        guard whole > 0 else { return nil }
        var bytes: [UInt8] = []
        for index in 0..<whole {
            guard let byte = UInt8(String(decoding: digits[(2 * index)..<(2 * index + 2)], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        guard bytes.contains(where: { $0 != 0 }) else { return nil }
        return bytes.reversed()
    }

    /// The pins on the map at ``lastSequence``, each with the sequence number of its drop:
    /// the newest snapshot's pins without their albums, then the fold of the events since.
    /// Whether a pin exists never depends on its album (the rules of PinDropped, PinRemoved
    /// and PlaceForgotten look at the pins alone), so this is the current state's answer
    /// without decoding 130,000 photos; the state it folds is never handed out.
    func pinsOnMap() throws -> [PinID: UInt64] {
        do {
            if let merged { return try merged.state(at: lastSequence).pins.mapValues(\.droppedAt) }
            let skeleton = try snapshots.newest(atOrBefore: lastSequence, heads: log.headInBackground, pinsOnly: true).0 ?? TouristState()
            return try TouristStore.replay(log, from: skeleton, through: lastSequence).pins.mapValues(\.droppedAt)
        } catch {
            throw TouristStore.storageError(error, "the pins on the map cannot be read")
        }
    }
}
