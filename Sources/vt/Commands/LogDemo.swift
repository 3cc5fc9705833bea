import ArgumentParser
import DemoLog
import EventLog
import Foundation

/// `vt log-demo`: appends and replays synthetic events in a bare event log, and says what it
/// did: the storage engine alone, without the app.
struct LogDemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-demo",
        abstract: "Append, replay and verify synthetic events in a temporary event log.",
        discussion: """
            Writes EVENTS synthetic events of about 100 bytes (the first hundred one at a time, \
            the rest in batches of 100), reopens the log, replays and checks every event, reads \
            one at random, and verifies the hash chain. The log is removed afterwards unless \
            --store names where to keep it.
            """
    )

    @Option(help: "How many events to append (1 to 10,000,000).")
    var events: UInt64 = 5_000

    @Option(help: "Keep the log in this directory (it must not exist yet) instead of a temporary one.")
    var store: String?

    @Option(help: "When an append counts as done: always, interval (every 50 ms) or none.")
    var durability: DurabilityChoice = .always

    enum DurabilityChoice: String, ExpressibleByArgument, CaseIterable {
        case always, interval, none
        var policy: LogConfiguration.Durability {
            switch self {
            case .always: .always
            case .interval: .interval(.milliseconds(50))
            case .none: .none
            }
        }
    }

    func validate() throws {
        guard (1...10_000_000).contains(events) else {
            throw ValidationError("--events must be between 1 and 10,000,000 (got \(events))")
        }
        if let store, FileManager.default.fileExists(atPath: store) {
            throw ValidationError("--store \(store) already exists; name a new directory")
        }
    }

    func run() throws {
        let temporary = store == nil
        let directory = store ?? NSTemporaryDirectory() + "vt-demo-\(UUID().uuidString.prefix(8))"
        defer { if temporary { try? FileManager.default.removeItem(atPath: directory) } }
        print("event log demo in \(directory)\(temporary ? " (removed afterwards)" : "")")
        do {
            _ = try LogDemo.run(in: directory, events: events, durability: durability.policy) { print("  " + $0) }
        } catch let error as LogError {
            throw RuntimeError(message: "vt log-demo: \(error)")
        }
        print(temporary ? "done; the temporary log was removed" : "done; the log is kept in \(directory)")
    }
}
