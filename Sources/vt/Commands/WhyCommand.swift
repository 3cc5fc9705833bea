import ArgumentParser
import DeviceLogs
import Explanations
import Foundation
import VirtualTourist

/// `vt why pin|album|new-collection|photo|region …`: the events behind a fact (docs/WHY.md).
struct WhyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "why", abstract: "The events behind a fact of the map, fewest first (docs/WHY.md).",
        discussion: """
            vt why pin PIN · vt why album PIN · vt why new-collection PIN · vt why photo PIN SLOT · vt why region. \
            PIN is an id or a unique prefix (a removed pin too); SLOT a photo's number in its collection, as vt pins --json \
            and the album show it. --at N answers for the state after event N.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "What to explain: pin, album, new-collection, photo or region.") var fact: String
    @Argument(help: "The pin (not for region); then, for photo, the slot.") var rest: [String] = []
    @Option(help: "Explain the state after this event (default: the last).") var at: UInt64?

    func run() async throws {
        let reader = try global.reader()
        let question = try parse(reader)
        let names = reader.hasSeveralDevices ? try Explainer.deviceNames(store: global.storePath) : [:]
        let answer = try Explainer(reader: reader, names: names).answer(question, at: at)
        if global.json { return try Output.json(WhyJSON(answer)) }
        print("at event \(answer.at): \(answer.fact)")
        guard !answer.because.isEmpty else { return }
        print("because:")
        for reason in answer.because {
            let device = reason.device.map { " on \($0)" } ?? ""
            print("  event \(reason.event.sequence)\(device) (\(reason.event.event.typeName), \(reason.event.timestamp)): \(reason.says)")
        }
    }

    private func parse(_ reader: StoreReader) throws -> WhyQuestion {
        let kinds = WhyQuestion.kinds
        guard kinds.contains(fact) else {
            throw ValidationError("vt why explains \(kinds.joined(separator: ", ")), not \"\(fact)\"")
        }
        if fact == "region" {
            guard rest.isEmpty else { throw ValidationError("vt why region takes nothing more") }
            return .region
        }
        let wanted = fact == "photo" ? 2 : 1
        guard rest.count == wanted else {
            throw ValidationError(fact == "photo" ? "vt why photo takes a pin and a slot number: vt why photo PIN SLOT" : "vt why \(fact) takes one pin: vt why \(fact) PIN")
        }
        let pin = try reader.pin(matching: rest[0])
        var slot: UInt32?
        if wanted == 2 {
            guard let number = UInt32(rest[1]) else { throw ValidationError("a slot is a whole number from 0, not \"\(rest[1])\"") }
            slot = number
        }
        return WhyQuestion(kind: fact, pin: pin, slot: slot)!
    }
}
