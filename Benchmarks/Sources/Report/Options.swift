import BenchKit
import EventLog
import Foundation

/// The command line of `vt-bench`.
struct Options {
    static let groups = ["append", "replay", "store", "blobs", "layout", "devices", "proofs", "why"]
    static let usage = """
        usage: vt-bench [--size 10k|100k|1m|10m|N] [--smoke] [--only append,replay,store,blobs,layout,devices,proofs,why] [--repeat N] [--seed N] [--json] [--svg FILE]
               [--block-codec zstd|fields]
        Runs every case on one seeded workload, the engine beside its SQLite peer, and prints a Markdown table
        (with --json, one JSON object: the workload, the seconds taken, and every row and note). --svg FILE also draws
        every case that has a peer as a chart, ours beside SQLite. --block-codec picks how the store's own
        compaction writes blocks (docs/FORMAT.md: codec 1, zstd over the columns; codec 2, field columns).
        """

    var events = 1_000_000
    var smoke = false
    var groups = Set(Options.groups)
    var repeats = 3
    var seed: UInt64 = 2026
    var json = false
    /// Where to draw the chart, if asked.
    var svg: String?
    /// Compaction writes codec 2 (field columns), as the app's store does; false: codec 1.
    var fieldColumns = true

    /// Durable cases: events appended one per commit (fsync-bound, so fewer).
    var durableEvents: Int { smoke ? 200 : 3_000 }
    /// Group commit: events per writer.
    var eventsPerWriter: Int { smoke ? 50 : 1_000 }
    /// Blob put/get: photos of 30 KB.
    var photos: Int { smoke ? 100 : 2_000 }
    /// Collection: the numbers of blobs.
    var collections: [Int] { smoke ? [1_000] : [10_000, 100_000] }
    /// The store's snapshot interval (as the app's default).
    var snapshotInterval: UInt64 { smoke ? 1_000 : 10_000 }

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--size":
                let text = try value(argument)
                guard let parsed = WorkloadSize.parse(text), parsed >= 1_000 else {
                    throw UsageError("--size takes 10k, 100k, 1m, 10m or a number of events of at least 1000, not \(text)")
                }
                events = parsed
            case "--smoke":
                smoke = true
                events = 5_000
                repeats = 1
            case "--only":
                let names = try value(argument).split(separator: ",").map(String.init)
                let unknown = names.filter { !Options.groups.contains($0) }
                guard unknown.isEmpty, !names.isEmpty else {
                    throw UsageError("--only takes \(Options.groups.joined(separator: ", ")); not \(unknown.joined(separator: ", "))")
                }
                groups = Set(names)
            case "--repeat":
                let text = try value(argument)
                guard let parsed = Int(text), (1...20).contains(parsed) else { throw UsageError("--repeat takes 1 to 20, not \(text)") }
                repeats = parsed
            case "--seed":
                let text = try value(argument)
                guard let parsed = UInt64(text) else { throw UsageError("--seed takes a whole number, not \(text)") }
                seed = parsed
            case "--json":
                json = true
            case "--block-codec":
                switch try value(argument) {
                case "zstd": fieldColumns = false
                case "fields": fieldColumns = true
                case let other: throw UsageError("--block-codec takes zstd or fields, not \(other)")
                }
            case "--svg":
                let path = try value(argument)
                guard !path.isEmpty, !path.hasPrefix("-") else { throw UsageError("--svg takes the path of the file to write, not \(path)") }
                svg = path
            case "--help", "-h":
                print(Options.usage)
                exit(0)
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
