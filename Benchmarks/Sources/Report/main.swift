// vt-bench: the benchmark report. Every case runs on one seeded workload that models real use
// (BenchKit's Workload), our engine beside its SQLite peer, and the table it prints (Markdown,
// on standard output; progress on standard error) gives ratios and the targets from
// ../shared/DESIGN.md, met or missed. docs/BENCHMARKS.md holds a recorded run.
//
//   swift run -c release vt-bench --size 1m      the full run
//   swift run -c release vt-bench --smoke        small sizes, for CI
//   … --json                                     one JSON object instead of the table
import BenchKit
import Foundation

// The child process behind the replay-memory figure (ReplayCases).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--replay-memory" {
    do { try measureReplayMemory(CommandLine.arguments[2]) } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--write-app-log", let count = Int(CommandLine.arguments[3]) {
    do { try ReplayTool.writeAppLog(at: CommandLine.arguments[2], events: count) } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
// Draws a recorded table: vt-bench --chart TABLE.md --svg FILE [TITLE].
if (5...6).contains(CommandLine.arguments.count), CommandLine.arguments[1] == "--chart", CommandLine.arguments[3] == "--svg" {
    do {
        let table = try String(contentsOfFile: CommandLine.arguments[2], encoding: .utf8)
        let rows = Chart.rows(markdown: table)
        guard !rows.isEmpty else { throw UsageError("\(CommandLine.arguments[2]) holds no vt-bench table") }
        let title = CommandLine.arguments.count == 6 ? CommandLine.arguments[5] : "vt-bench: ours beside SQLite"
        try Data(Chart.svg(rows: rows, title: title).utf8).write(to: URL(fileURLWithPath: CommandLine.arguments[4]))
    } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--write-store", let count = Int(CommandLine.arguments[3]) {
    do { try await ReplayTool.writeStore(at: CommandLine.arguments[2], events: count) } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if (3...4).contains(CommandLine.arguments.count), CommandLine.arguments[1] == "--open-store" {
    do {
        try await ReplayTool.openStore(CommandLine.arguments[2], times: CommandLine.arguments.count == 4 ? Int(CommandLine.arguments[3]) ?? 5 : 5)
    } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if (3...4).contains(CommandLine.arguments.count), CommandLine.arguments[1] == "--replay-stages" {
    do {
        try ReplayTool.replayStages(CommandLine.arguments[2], times: CommandLine.arguments.count == 4 ? Int(CommandLine.arguments[3]) ?? 3 : 3)
    } catch {
        FileHandle.standardError.write(Data("vt-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
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
    if options.groups.contains("append") { try AppendCases(options: options, report: report, workspace: workspace).run() }
    if options.groups.contains("replay") { try ReplayCases(options: options, report: report, workspace: workspace).run() }
    if options.groups.contains("store") { try await StoreCases(options: options, report: report, workspace: workspace).run() }
    if options.groups.contains("blobs") { try BlobCases(options: options, report: report).run() }
    if options.groups.contains("layout") { try LayoutCases(options: options, report: report).run() }
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
