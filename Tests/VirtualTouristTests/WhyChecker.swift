import DeviceLogs
import EventLog
import Explanations
import Testing
@testable import VirtualTourist

/// Checks `vt why` against a replay of the whole history (docs/WHY.md, "How it is tested"):
/// every event is folded into the full state, in the store's order, and after each one the
/// facts of the pin it is about are compared with before; the event that last changed a fact is
/// the one that set it. At each point asked, every answer's first reason must be that event.
struct WhyChecker {
    let reader: StoreReader
    var answers = 0

    init(_ reader: StoreReader) { self.reader = reader }

    /// Replays the history and checks every pin's answers at each of `points` (and the region's).
    mutating func check(at points: Set<UInt64>, photos: Bool = true) throws {
        let local = reader.localDevice
        let explainer = Explainer(reader: reader)
        var state = TouristState(localDevice: local)
        var setters: [PinID: [PinFacts.Key: UInt64]] = [:]
        var slotsSeen: [PinID: Set<UInt32>] = [:]
        var forgotten: [PinID: UInt64] = [:]
        var lastRegion: UInt64?
        var failures: [String] = []
        var answered = 0
        try reader.forEachEvent { event in
            let pin: PinID? = if case .placeForgotten(let pin, _) = event.event { pin } else { event.event.pin }
            let before = pin.map { PinFacts($0, in: state, on: local) }
            state.apply(event)
            if case .regionChanged = event.event, event.origin?.device == local || local == nil { lastRegion = event.sequence }
            if let pin, let before {
                let after = PinFacts(pin, in: state, on: local)
                for key in after.changes(from: before) {
                    setters[pin, default: [:]][key] = event.sequence
                    if case .slot(let number) = key { slotsSeen[pin, default: []].insert(number) }
                }
                if case .placeForgotten = event.event { forgotten[pin] = event.sequence }
            }
            guard points.contains(event.sequence) else { return }
            let point = event.sequence
            for (pin, facts) in setters {
                var questions: [(WhyQuestion, PinFacts.Key)] = [(.pin(pin), .place), (.album(pin), .album), (.newCollection(pin), .newCollection)]
                if photos { questions += slotsSeen[pin, default: []].sorted().map { (.photo(pin, slot: $0), .slot($0)) } }
                for (question, key) in questions {
                    let answer = try explainer.answer(question, at: point)
                    answered += 1
                    let first = answer.because.first?.event.sequence
                    if let expected = facts[key], first != expected {
                        failures.append("at \(point), \(question): the replay says event \(expected) set it, the answer begins with \(first.map(String.init) ?? "nothing") (\(answer.fact))")
                    }
                    if answer.because.contains(where: { $0.event.sequence > point }) { failures.append("at \(point), \(question): a reason after the point") }
                }
                let current = PinFacts(pin, in: state, on: local)
                let place = try explainer.answer(.pin(pin), at: point)
                if let coordinate = current.place, !place.fact.contains(coordinate.description) { failures.append("at \(point): \(place.fact) is not \(coordinate)") }
                if current.place == nil, let forget = forgotten[pin], place.because.first?.event.sequence != forget {
                    failures.append("at \(point): forgotten pin \(pin) is not explained by its forget")
                }
            }
            let region = try explainer.answer(.region, at: point)
            answered += 1
            if region.because.first?.event.sequence != lastRegion {
                failures.append("at \(point): the map's last move is event \(lastRegion.map(String.init) ?? "none"), the answer names \(region.because.first.map { String($0.event.sequence) } ?? "none")")
            }
            // The answer looks for the move without folding; the replay's region is the truth.
            let opens = state.region.map { "the map opens at \($0)" } ?? "the map opens where it first opened: it was never moved through event \(point)"
            if region.fact != opens { failures.append("at \(point): the replay says \"\(opens)\", the answer \"\(region.fact)\"") }
        }
        answers += answered
        for failure in failures.prefix(20) { Issue.record(Comment(rawValue: failure)) }
    }
}
