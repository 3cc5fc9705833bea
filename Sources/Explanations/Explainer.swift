import DeviceLogs
import EventLog
import Synchronization
import VirtualTourist

/// Answers `vt why` (docs/WHY.md): the events behind a fact of the state at any point.
///
/// A pin's facts come from its own events only (each rule of the fold looks at one pin), so
/// the answer folds the pin's history, which the key summaries find without reading the rest
/// of the log, and notes after each event which facts it changed. The event that last changed
/// a fact is the one that set it; the ones before it are what it replaced.
///
/// ```swift
/// let answer = try Explainer(reader: reader).answer(.pin(pin), at: 120)
/// answer.fact                    // "pin 1111000000000001 is at 48.8584, 2.2945"
/// answer.because.first?.event    // the drag that put it there
/// ```
public struct Explainer {
    let reader: StoreReader
    let names: [DeviceID: String]
    /// Each pin's history, read once: the reader's history does not change, and several answers
    /// about one pin (or one pin at several points) need it again.
    private let histories = Histories()

    /// - Parameter names: what to call each device of a store of several (its name, or its
    ///   short id); empty for a store of one.
    public init(reader: StoreReader, names: [DeviceID: String] = [:]) {
        self.reader = reader
        self.names = names
    }

    /// Each device of a store of several by its name, or its short id when it has none.
    public static func deviceNames(store: String) throws -> [DeviceID: String] {
        let devices = try StoreSync.devices(of: store)
        var names = [devices.this.device: devices.this.name ?? devices.this.device.short]
        for copy in devices.copies { names[copy.id] = copy.file?.name ?? copy.id.short }
        return names
    }

    final class Histories: Sendable {
        /// Each pin's events read, through the point they were read for.
        private let read = Mutex<[PinID: (through: UInt64, events: [RecordedEvent])]>([:])
        /// The last walk made: the questions about one pin at one point share it.
        let lastWalk = Mutex<(pin: PinID, point: UInt64, slots: PinFacts.Slots, walk: PinWalk)?>(nil)

        func of(_ pin: PinID, through point: UInt64, _ reading: () throws -> [RecordedEvent]) rethrows -> [RecordedEvent] {
            if let known = read.withLock({ $0[pin] }), known.through >= point { return known.events.filter { $0.sequence <= point } }
            let events = try reading()
            read.withLock { $0[pin] = (point, events) }
            return events
        }
    }

    /// One pin's events folded through a point: the facts, and for each fact the events that
    /// changed it, in order.
    struct PinWalk: Sendable {
        var state: TouristState
        var facts: PinFacts
        var setters: [PinFacts.Key: [RecordedEvent]] = [:]
        var events: [RecordedEvent] = []
        /// The pin's first event after the point, when it has none through it ("not on the map yet").
        var later: RecordedEvent?

        func lastSetter(_ key: PinFacts.Key) -> RecordedEvent? { setters[key]?.last }
        func event(at sequence: UInt64?) -> RecordedEvent? { sequence.flatMap { s in events.first { $0.sequence == s } } }
    }

    func walk(_ pin: PinID, through point: UInt64, slots: PinFacts.Slots) throws -> PinWalk {
        if let last = histories.lastWalk.withLock({ $0 }), last.pin == pin, last.point == point, last.slots == slots || last.slots == .all {
            return last.walk
        }
        let walk = try makeWalk(pin, through: point, slots: slots)
        histories.lastWalk.withLock { $0 = (pin, point, slots, walk) }
        return walk
    }

    private func makeWalk(_ pin: PinID, through point: UInt64, slots: PinFacts.Slots) throws -> PinWalk {
        let local = reader.localDevice
        var walk = PinWalk(state: TouristState(localDevice: local), facts: PinFacts(pin, in: TouristState(), on: local, slots: slots))
        // Only the blocks through the point are read.
        for event in try histories.of(pin, through: point, { try reader.history(of: pin, through: point) }) {
            walk.state.apply(event)
            let facts = PinFacts(pin, in: walk.state, on: local, slots: slots)
            for key in facts.changes(from: walk.facts) { walk.setters[key, default: []].append(event) }
            walk.facts = facts
            walk.events.append(event)
        }
        if walk.events.isEmpty {
            // Nothing through the point: a pin dropped later says "not yet", one never dropped is unknown.
            walk.later = try reader.history(of: pin, from: point + 1).first
        }
        return walk
    }

    /// The answer to `question` at `point` (the last event by default).
    ///
    /// - Throws: ``DomainError`` `.invalidArgument` for a point past the history; `.unknownPin`
    ///   for a pin the history never had; `.storage` when the log cannot be read.
    public func answer(_ question: WhyQuestion, at point: UInt64? = nil) throws -> WhyAnswer {
        let point = point ?? reader.lastSequence
        guard point <= reader.lastSequence else {
            throw DomainError(.invalidArgument, "the history has \(reader.lastSequence) events; there is no event \(point)")
        }
        guard let pin = question.pin else { return try region(at: point) }
        let slots: PinFacts.Slots = if case .photo(_, let slot) = question { .one(slot) } else { .none }
        let walk = try walk(pin, through: point, slots: slots)
        guard !walk.events.isEmpty || walk.later != nil else {
            throw DomainError(.unknownPin, "the history never had pin \(pin)")
        }
        var answer = WhyAnswer(question: question, at: point, fact: "", because: [])
        switch question {
        case .pin: explainPlace(pin, walk, into: &answer)
        case .album: explainAlbum(pin, walk, into: &answer)
        case .newCollection: explainNewCollection(pin, walk, into: &answer)
        case .photo(_, let slot): explainPhoto(pin, slot: slot, walk, into: &answer)
        case .region: break
        }
        return answer
    }

    func reason(_ event: RecordedEvent, _ says: String) -> WhyAnswer.Reason {
        WhyAnswer.Reason(event: event, device: event.origin.map { names[$0.device] ?? $0.device.short }, says: says)
    }

    /// Where the map opens: the last map move this device made through the point, found
    /// backwards without folding (the region's rule looks at each move alone,
    /// ``TouristState/regionSet(by:on:)``), in windows that grow fourfold: people move the map
    /// often, so the last move is usually near, and only the events about no pin are decoded.
    func region(at point: UInt64) throws -> WhyAnswer {
        var answer = WhyAnswer(question: .region, at: point, fact: "", because: [])
        let local = reader.localDevice
        var end = point
        var window: UInt64 = 1_024
        while end > 0 {
            let start = end > window ? end - window + 1 : 1
            var found: (event: RecordedEvent, region: MapRegion)?
            try reader.forEachEventAboutNoPin(from: start, through: end) { event in
                if let region = TouristState.regionSet(by: event, on: local) { found = (event, region) }
            }
            if let found {
                answer.fact = "the map opens at \(found.region)"
                let rule = local == nil ? "" : " (each device opens where it last was: the map is never merged)"
                answer.because = [reason(found.event, "moved the map there" + rule)]
                return answer
            }
            end = start - 1
            window *= 4
        }
        answer.fact = "the map opens where it first opened: it was never moved through event \(point)"
        return answer
    }
}
