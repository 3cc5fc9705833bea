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
