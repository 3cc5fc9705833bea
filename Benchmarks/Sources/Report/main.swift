// vt-bench: the benchmark report. Every case runs on one seeded workload that models real use
// (BenchKit's Workload), our engine beside its SQLite peer, and the table it prints (Markdown,
// on standard output; progress on standard error) gives ratios and the targets from
// ../shared/DESIGN.md, met or missed. docs/BENCHMARKS.md holds a recorded run.
//
//   swift run -c release vt-bench --size 1m      the full run
//   swift run -c release vt-bench --smoke        small sizes, for CI
//   … --json                                     one JSON object instead of the table
//   swift run -c release vt-bench replication --nats URLS    replication into a cluster
import BenchKit
import Foundation

/// Runs one of the single-purpose modes below and exits: 0 when it worked, 1 with its error.
func runMode(_ body: () async throws -> Void) async -> Never {
    do { try await body() } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

let arguments = CommandLine.arguments
/// The number at `index`, if given (else `fallback`).
func count(at index: Int, else fallback: Int) -> Int { arguments.count > index ? Int(arguments[index]) ?? fallback : fallback }

switch arguments.count > 1 ? arguments[1] : "" {
case "--replay-memory" where arguments.count == 3:
    // The child process behind the replay-memory figure (ReplayCases).
    await runMode { try measureReplayMemory(arguments[2]) }
case "--chart" where (5...6).contains(arguments.count) && arguments[3] == "--svg":
    // A recorded table drawn again: vt-bench --chart TABLE.md --svg FILE [TITLE].
    await runMode { try Chart.draw(table: arguments[2], to: arguments[4], title: arguments.count == 6 ? arguments[5] : nil) }
case "--write-app-log" where arguments.count == 4:
    await runMode { try ReplayTool.writeAppLog(at: arguments[2], events: count(at: 3, else: 1_000_000)) }
case "--write-hot-tail" where arguments.count == 4:
    await runMode { try ReplayTool.writeAppLog(at: arguments[2], events: count(at: 3, else: 1_000_000), compacting: false) }
case "--append-sessions" where arguments.count == 4:
    await runMode { try ReplayTool.appendSessions(at: arguments[2], events: count(at: 3, else: 1_000_000)) }
case "--compact" where arguments.count == 3:
    await runMode { try ReplayTool.compact(arguments[2]) }
case "--encode-blocks" where (3...4).contains(arguments.count):
    await runMode { try ReplayTool.encodeBlocks(arguments[2], times: count(at: 3, else: 5)) }
case "--why" where arguments.count == 3:
    await runMode { try WhyCases.breakdown(arguments[2]) }
case "--write-store" where arguments.count == 4:
    await runMode { try await ReplayTool.writeStore(at: arguments[2], events: count(at: 3, else: 1_000_000)) }
case "--prove" where arguments.count == 3:
    await runMode { try ProofCases.breakdown(arguments[2]) }
case "--commit-on" where (3...4).contains(arguments.count):
    await runMode { try await CommitTool.run(arguments[2], actions: try CommitTool.actions(arguments.count == 4 ? arguments[3] : nil)) }
case "--open-store" where (3...4).contains(arguments.count):
    await runMode { try await ReplayTool.openStore(arguments[2], times: count(at: 3, else: 5)) }
case "--crash-image" where arguments.count == 5:
    await runMode { try await ReplayTool.writeCrashImage(at: arguments[2], events: count(at: 3, else: 1_000_000), image: arguments[4]) }
case "--open-crashed" where (3...4).contains(arguments.count):
    await runMode { try await ReplayTool.openCrashed(arguments[2], times: count(at: 3, else: 5)) }
case "--verify-log" where (3...4).contains(arguments.count):
    await runMode { try ReplayTool.verifyLog(arguments[2], times: count(at: 3, else: 3)) }
case "--replay-stages" where (3...4).contains(arguments.count):
    await runMode { try ReplayTool.replayStages(arguments[2], times: count(at: 3, else: 3)) }
case "replication":
    // Issue 21's targets against a JetStream cluster (ReplicationCases; Benchmarks/scripts/replication).
    await runMode { try await ReplicationCases(Array(arguments.dropFirst(2))).run() }
default:
    break
}

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("vt-bench: \(error)\n\(Options.usage)\n".utf8))
    exit(2)
}

let report = Report()
let workspace = Workspace(options: options)
let started = ContinuousClock.now
do {
    FileHandle.standardError.write(Data("vt-bench: \(WorkloadSize.name(options.events)) events, seed \(options.seed), best of \(options.repeats)\n".utf8))
    if options.groups.contains("append") {
        try AppendCases(options: options, report: report, workspace: workspace).run()
        try await ActionCases(options: options, report: report).run()
    }
    if options.groups.contains("replay") { try ReplayCases(options: options, report: report, workspace: workspace).run() }
    if options.groups.contains("store") { try await StoreCases(options: options, report: report, workspace: workspace).run() }
    if options.groups.contains("blobs") { try BlobCases(options: options, report: report).run() }
    if options.groups.contains("layout") { try LayoutCases(options: options, report: report).run() }
    if options.groups.contains("devices") { try await DeviceCases(options: options, report: report).run() }
    if options.groups.contains("proofs") { try await ProofCases(options: options, report: report).run() }
    if options.groups.contains("why") { try await WhyCases(options: options, report: report).run() }
} catch {
    FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
    exit(1)
}
let seconds = Measure.seconds(since: started)
if let path = options.svg {
    let title = "vt-bench, \(WorkloadSize.name(options.events)) events (seed \(options.seed)): ours beside SQLite"
    do {
        try Data(Chart.svg(rows: report.rows, title: title).utf8).write(to: URL(fileURLWithPath: path))
    } catch {
        FileHandle.standardError.write(Data("vt-bench: the chart cannot be written to \(path): \(error)\n".utf8))
        exit(1)
    }
}
if options.json {
    do {
        print(try report.json(workload: WorkloadSize.name(options.events), events: options.events, seed: options.seed, seconds: seconds))
    } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
} else {
    print("Workload: \(WorkloadSize.name(options.events)) events (seed \(options.seed)); \(Figure.fixed(seconds, 0)) s in all.\n")
    print(report.markdown())
}
