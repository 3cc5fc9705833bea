/// What-if replays and bisection: questions answered by folding the log again.
extension StoreReader {
    /// The outcome of replaying the log without some events.
    public struct WhatIf: Sendable {
        public var state: TouristState
        /// The events left out on request.
        public var skipped: [RecordedEvent] = []
        /// Later events the rules refuse once the skipped ones are gone (a drag of a pin never
        /// dropped, a photo of a listing never made, …), with why. They are left out too.
        public var refused: [(event: RecordedEvent, problem: DomainError)] = []
    }

    /// The state after `through` (default: the end) had the `skipping` events never happened.
    /// Every other event is checked against the rules on the way. Starts from the newest
    /// snapshot before the first skipped event, so the cost is the events after it.
    public func replay(through: UInt64? = nil, skipping: Set<UInt64> = [], progress: WorkProgress? = nil) throws -> WhatIf {
        let through = through ?? lastSequence
        guard through <= lastSequence else {
            throw DomainError(.invalidArgument, "the log ends at sequence \(lastSequence); cannot replay to \(through)")
        }
        if let outside = skipping.first(where: { $0 == 0 || $0 > through }) {
            throw DomainError(.invalidArgument, "event \(outside) cannot be skipped: the replay covers 1…\(through)")
        }
        let start = skipping.min().map { $0 - 1 } ?? through
        var result = WhatIf(state: try state(at: start))
        let base = result.state.sequence
        try forEachEvent(from: base + 1, through: through, doing: "the log cannot be replayed") { recorded in
            if skipping.contains(recorded.sequence) {
                result.skipped.append(recorded)
                result.state.sequence = recorded.sequence
            } else {
                // The fold's own verdict (in a store of several devices it also weighs who wrote the
                // event, and applies a stale removal that names its photo); the rules say why.
                let problem = result.state.problem(with: recorded.event, by: recorded.origin?.device)
                let ignored = result.state.ignoredEvents
                result.state.apply(recorded)
                if result.state.ignoredEvents > ignored {
                    result.refused.append((recorded, problem ?? DomainError(.wrongAlbumState, "the fold passed over it")))
                }
            }
            if recorded.sequence % 8192 == 0 {
                progress?("replaying", Int64(recorded.sequence - base), Int64(through - base))
            }
        }
        return result
    }

    /// What the fold made of one event (`vt show`): in a store of several devices the rules by
    /// intent decide between devices' concurrent actions (docs/DEVICES.md, "Rules by intent").
    public enum Verdict: Sendable {
        /// It changed the state as it says.
        case folded
        /// The rules passed over it, for this reason.
        case passedOver(DomainError)
        /// Another device's view of the map: kept in its log, never merged.
        case anotherDevicesView
    }

    /// The fold's verdict on `recorded`, an event of this store's history: the state just before
    /// it is made (time travel), then the event folded onto it.
    public func verdict(of recorded: RecordedEvent) throws -> Verdict {
        var state = try state(at: recorded.sequence - 1)
        if case .regionChanged = recorded.event, let origin = recorded.origin, let local = state.localDevice, origin.device != local {
            return .anotherDevicesView
        }
        let problem = state.problem(with: recorded.event, by: recorded.origin?.device)
        let ignored = state.ignoredEvents
        state.apply(recorded)
        guard state.ignoredEvents > ignored else { return .folded }
        return .passedOver(problem ?? DomainError(.wrongAlbumState, "the fold passed over it"))
    }

    /// Where a condition turns true.
    public enum BisectOutcome: Hashable, Sendable {
        /// The condition is false after `sequence - 1` and true after `sequence`.
        case turnsTrue(at: UInt64)
        /// It already holds at the start of the range.
        case alreadyTrue(at: UInt64)
        /// It does not hold at the end of the range.
        case neverTrue(through: UInt64)
    }

    /// Finds a sequence number at which `condition` turns from false to true between `from`
    /// and `through` (default: the whole log).
    ///
    /// `exhaustive == false` bisects like `git bisect`: O(log n) states, each a snapshot load
    /// and at most a snapshot interval of events; when the condition turns true more than once,
    /// it finds one of the turns. `exhaustive == true` folds every event and finds the first.
    public func bisect(
        _ condition: StateCondition, from: UInt64 = 0, through: UInt64? = nil, exhaustive: Bool = false,
        progress: WorkProgress? = nil
    ) throws -> (outcome: BisectOutcome, statesChecked: Int) {
        let through = through ?? lastSequence
        guard from <= through, through <= lastSequence else {
            throw DomainError(.invalidArgument, "the range \(from)…\(through) is not within the log (0…\(lastSequence))")
        }
        var checked = 1
        var state = try state(at: from)
        if condition.holds(in: state) { return (.alreadyTrue(at: from), checked) }
        if exhaustive {
            var found: UInt64? = nil
            try forEachEvent(from: from + 1, through: through) { recorded in
                guard found == nil else { return }
                state.apply(recorded)
                checked += 1
                if condition.holds(in: state) { found = recorded.sequence }
                if recorded.sequence % 8192 == 0 { progress?("folding", Int64(recorded.sequence - from), Int64(through - from)) }
            }
            return (found.map { .turnsTrue(at: $0) } ?? .neverTrue(through: through), checked)
        }
        checked += 1
        guard condition.holds(in: try self.state(at: through)) else { return (.neverTrue(through: through), checked) }
        var low = from  // false here
        var high = through  // true here
        let steps = Int64(max(1, (through - from).bitWidth - (through - from).leadingZeroBitCount))
        while high - low > 1 {
            let middle = low + (high - low) / 2
            checked += 1
            if condition.holds(in: try self.state(at: middle)) { high = middle } else { low = middle }
            progress?("bisecting", Int64(checked - 2), steps)
        }
        return (.turnsTrue(at: high), checked)
    }

    /// Every pin id the log ever dropped or forgot, oldest first, once each (for naming removed
    /// and forgotten pins: a forgotten pin's PinDropped is erased, its PlaceForgotten names it).
    public func droppedPins() throws -> [PinID] {
        var pins: [PinID] = []
        var seen = Set<PinID>()
        try forEachEvent { recorded in
            switch recorded.event {
            case .pinDropped(let pin, _), .placeForgotten(let pin, _):
                if seen.insert(pin).inserted { pins.append(pin) }
            default: break
            }
        }
        return pins
    }
}
