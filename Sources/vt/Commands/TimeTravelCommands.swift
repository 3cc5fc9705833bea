import ArgumentParser
import VirtualTourist

/// `vt state [--at SEQ | --at-time TIME]`.
struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "The map and albums as they are now, or were after an event or at a time.")
    @OptionGroup var global: GlobalOptions
    // Unconditional: `--at -1` is a wrong event number, not a missing one.
    @Option(parsing: .unconditional, help: "The state after this event (0: before anything happened).") var at: UInt64?
    @Option(help: ArgumentHelp("The state at this time (ISO 8601, a date, or a span before now like 2h).", valueName: "TIME"))
    var atTime: String?
    @Flag(help: "List every album's photos too.") var photos = false
    @OptionGroup var numbers: DeviceNumbers

    func validate() throws {
        if at != nil, atTime != nil { throw ValidationError("give --at or --at-time, not both") }
        if numbers.device != nil, at == nil { throw ValidationError("--device counts the numbers of --at; give --at") }
        if let atTime { _ = try ArgumentValues.time(atTime) }
    }

    func run() async throws {
        let reader = try global.reader()
        let state: TouristState
        if let at {
            state = try reader.state(at: try numbers.position(at, reader: reader, store: global.storePath))
        } else if let atTime {
            state = try reader.state(atTime: try ArgumentValues.time(atTime))
        } else {
            state = try reader.currentState()
        }
        if global.json { return Output.jsonLine(try StateJSON.line(state)) }
        Output.lines(Describe.state(state))
        if photos { for pin in state.pinsInDropOrder { Output.lines([""] + Describe.album(pin)) } }
    }
}

/// `vt diff A B`.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff", abstract: "What changed between the states after two events: pins, moves, photos, the region.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The earlier sequence number (0: the empty state).") var from: UInt64
    @Argument(help: "The later sequence number.") var to: UInt64
    @OptionGroup var numbers: DeviceNumbers

    func run() async throws {
        let reader = try global.reader()
        let ends = try numbers.positions([from, to], reader: reader, store: global.storePath)
        let diff = try reader.difference(from: ends[0], to: ends[1])
        if global.json {
            Output.jsonLine(try StateDiffJSON.line(diff))
        } else {
            let out = LineWriter()
            Describe.diff(diff, to: out)
            out.flush()
        }
        Output.finish()
    }
}

/// `vt replay [--to SEQ] [--skip SEQ …]`: what if some events had never happened?
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay", abstract: "Replay the log, optionally without some events, and show the resulting state.",
        discussion: "Every event after a skipped one is checked against the rules again; the ones the rules now refuse (a drag of a pin never dropped, …) are listed and left out. Nothing is written.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Stop after this event (default: the last).") var to: UInt64?
    @Option(parsing: .upToNextOption, help: ArgumentHelp("Leave out these events (repeatable, or several after one --skip).", valueName: "SEQ"))
    var skip: [UInt64] = []
    @OptionGroup var numbers: DeviceNumbers

    struct View: Encodable {
        var skipped: [EventJSON]
        var refused: [Refused]
        var state: StateJSON
    }

    struct Refused: Encodable {
        var event: EventJSON
        var problem: String
    }

    func validate() throws {
        if skip.contains(0) { throw ValidationError("--skip: sequence numbers start at 1") }
    }

    func run() async throws {
        let reader = try global.reader()
        let to = try to.map { try numbers.position($0, reader: reader, store: global.storePath) }
        let skip = try numbers.positions(skip, reader: reader, store: global.storePath)
        let bar = ProgressBar()
        let result = try reader.replay(through: to, skipping: Swift.Set(skip)) { bar.update($0, done: $1, total: $2) }
        bar.finish()
        if global.json {
            return try Output.json(View(
                skipped: result.skipped.map(EventJSON.init),
                refused: result.refused.map { Refused(event: EventJSON($0.event), problem: $0.problem.message) },
                state: StateJSON(result.state)))
        }
        for event in result.skipped { print("skipped: " + Describe.line(event)) }
        for (event, problem) in result.refused { print("refused: " + Describe.line(event) + " — \(problem.message)") }
        if !skip.isEmpty, result.refused.isEmpty { print("every later event still follows the rules") }
        Output.lines(Describe.state(result.state))
    }
}

/// `vt bisect`: when did a condition on the state become true?
struct BisectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bisect", abstract: "Find the event at which a condition on the state becomes true.",
        discussion: """
            Give one condition: --gone or --present (with --pin), --photos-below K or --photos-at-least K (with --pin), \
            --pins-below N or --pins-at-least N. The condition must be false at --from (default 0, the empty state) and \
            true at --to (default the last event). Like git bisect it checks O(log n) states; if the condition turns \
            true more than once in the range it finds one of those turns. --first folds every event instead and finds \
            the first.
            Example: vt bisect --pin 3fa2 --photos-below 5
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The pin the condition is about.") var pin: String?
    @Flag(help: "The pin is gone (removed, or not yet dropped).") var gone = false
    @Flag(help: "The pin is on the map.") var present = false
    @Option(help: "The pin's album shows fewer than K photos.") var photosBelow: Int?
    @Option(help: "The pin's album shows at least K photos.") var photosAtLeast: Int?
    @Option(help: "Fewer than N pins are on the map.") var pinsBelow: Int?
    @Option(help: "At least N pins are on the map.") var pinsAtLeast: Int?
    @Option(help: "Start of the range: a sequence number where the condition is false.") var from: UInt64 = 0
    @Option(help: "End of the range: a sequence number where the condition is true.") var to: UInt64?
    @OptionGroup var numbers: DeviceNumbers
    @Flag(help: "Fold every event and find the first turn (slower, exact).") var first = false

    struct View: Encodable {
        var condition: String
        var outcome: String
        var seq: UInt64
        var states_checked: Int
        var event: EventJSON?
    }

    func validate() throws {
        let chosen = [gone, present, photosBelow != nil, photosAtLeast != nil, pinsBelow != nil, pinsAtLeast != nil].count { $0 }
        guard chosen == 1 else { throw ValidationError("give exactly one condition (--gone, --present, --photos-below, --photos-at-least, --pins-below, --pins-at-least); see vt bisect --help") }
        let needsPin = gone || present || photosBelow != nil || photosAtLeast != nil
        if needsPin, pin == nil { throw ValidationError("this condition is about a pin: add --pin PIN") }
        if !needsPin, pin != nil { throw ValidationError("--pin goes with --gone, --present, --photos-below or --photos-at-least") }
        for (name, value) in [("--photos-below", photosBelow), ("--photos-at-least", photosAtLeast), ("--pins-below", pinsBelow), ("--pins-at-least", pinsAtLeast)] {
            if let value, value < 0 { throw ValidationError("\(name) cannot be negative") }
        }
        if let to, to < from { throw ValidationError("--to \(to) is before --from \(from)") }
    }

    func run() async throws {
        let reader = try global.reader()
        let pinID = try pin.map { try reader.pin(matching: $0) }
        let condition: StateCondition =
            if gone { .pinGone(pinID!) } else if present { .pinPresent(pinID!) } else if let photosBelow { .photosBelow(pinID!, photosBelow) }
            else if let photosAtLeast { .photosAtLeast(pinID!, photosAtLeast) } else if let pinsBelow { .pinsBelow(pinsBelow) }
            else { .pinsAtLeast(pinsAtLeast!) }
        let from = try numbers.position(from, reader: reader, store: global.storePath)
        let to = try to.map { try numbers.position($0, reader: reader, store: global.storePath) }
        let bar = ProgressBar()
        let (outcome, checked) = try reader.bisect(condition, from: from, through: to, exhaustive: first) { bar.update($0, done: $1, total: $2) }
        bar.finish()
        switch outcome {
        case .turnsTrue(let sequence):
            let event = try reader.causes(of: sequence)[0]
            if global.json {
                return try Output.json(View(condition: condition.description, outcome: "turns-true", seq: sequence, states_checked: checked, event: EventJSON(event)))
            }
            print("\(condition) from event \(sequence) on (\(checked) states checked):")
            print(Describe.line(event))
        case .alreadyTrue(let sequence):
            if global.json { return try Output.json(View(condition: condition.description, outcome: "already-true", seq: sequence, states_checked: checked)) }
            print("\(condition) already at event \(sequence), the start of the range; give a --from where it is false")
        case .neverTrue(let sequence):
            if global.json { return try Output.json(View(condition: condition.description, outcome: "never-true", seq: sequence, states_checked: checked)) }
            print("\(condition) is not true at event \(sequence), the end of the range")
        }
    }
}
