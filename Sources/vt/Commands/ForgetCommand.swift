import ArgumentParser
import VirtualTourist

/// `vt forget PIN --yes`: erase a place from the whole history (docs/CLI.md, "vt forget").
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Forget a place: erase a pin from the whole history; the chain still verifies.",
        discussion: """
            The pin leaves the map, and every event about it (and every map region zoomed in on it) has \
            its payload erased from every file of the store: the log, the snapshots, quarantined bytes \
            and the format-1 log kept by vt upgrade. Its photos are deleted at once. What stays: sequence \
            numbers, times, event types and payload digests, so vt verify still passes; and a \
            PlaceForgotten event naming the pin. This cannot be undone, so it asks for --yes.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pin's id (16 hexadecimal digits; a removed pin too), or a unique prefix of a pin on the map.")
    var pin: String
    @Flag(help: "Forget without asking: what is erased cannot be brought back.") var yes = false

    func run() async throws {
        let report = try await global.withStore { store in
            let id = try PinID(parsing: pin) ?? store.state.pin(matching: pin).id
            guard yes else {
                let place = store.state.pins[id].map { " at \(Describe.place($0.coordinate))" } ?? ""
                throw RuntimeError(message:
                    "this would forget pin \(id)\(place): every event about it, its photos and any old copies of the log are erased for good."
                        + " Run again with --yes to do it")
            }
            return try await store.forget(id) { step in if !global.json { Terminal.note(step) } }
        }
        if global.json {
            try Output.json(ForgetJSON(report))
        } else {
            print("forgot pin \(report.pin) (event \(report.sequence)): \(Self.count(report.erasedEvents, "event")) erased,"
                + " \(Self.count(report.photosDeleted, "photo")) deleted, \(Self.count(report.snapshotsRewritten, "snapshot")) rewritten"
                + (report.snapshotsRemoved > 0 ? ", \(Self.count(report.snapshotsRemoved, "snapshot")) removed" : "")
                + (report.quarantinedFilesRemoved > 0 ? ", \(report.quarantinedFilesRemoved) quarantined files removed" : "")
                + (report.formerLogRemoved ? ", log.format1/ removed" : "")
                + (report.resumed ? " (an interrupted forget, finished)" : ""))
            if let receipt = report.receipt { print("receipt: \(receipt) (check it with vt check-proof)") }
            if let why = report.receiptProblem { print(Terminal.styled("no receipt: ", .red) + why) }
        }
    }

    static func count(_ number: some BinaryInteger, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}

struct ForgetJSON: Encodable {
    var pin: String
    var seq: UInt64
    var erased_events: UInt64
    var photos_deleted: Int
    var snapshots_rewritten: Int
    var snapshots_removed: Int
    var quarantined_files_removed: Int
    var former_log_removed: Bool
    var resumed: Bool
    var receipt: String?
    var receipt_problem: String?

    init(_ report: ForgetReport) {
        pin = report.pin.description
        seq = report.sequence
        erased_events = report.erasedEvents
        photos_deleted = report.photosDeleted
        snapshots_rewritten = report.snapshotsRewritten
        snapshots_removed = report.snapshotsRemoved
        quarantined_files_removed = report.quarantinedFilesRemoved
        former_log_removed = report.formerLogRemoved
        resumed = report.resumed
        receipt = report.receipt
        receipt_problem = report.receiptProblem
    }
}
