import BenchKit
import EventLog
import Foundation
import TouristWorkload
import VirtualTourist

/// Modes for measuring reading on its own, without the rest of the run:
///
///   vt-bench --write-app-log DIR EVENTS    the workload as the app appends it, then compacted
///   vt-bench --write-hot-tail DIR EVENTS   the same, left in the hot tail
///   vt-bench --compact DIR                 compacts DIR's hot tail, printing the CPU it took
///   vt-bench --replay-stages DIR [TIMES]   replays DIR by stages, best of TIMES, events/s
///   vt-bench --write-store DIR EVENTS      a whole store (log and snapshots) of the workload,
///                                          for Benchmarks/scripts/slider
///   vt-bench --open-store DIR [TIMES]      opens it TIMES times, and the state at 20 points
///
/// so `perf record … vt-bench --replay-stages DIR` profiles nothing but the replay, and
/// `--compact` on a fresh copy of a `--write-hot-tail` folder nothing but a compaction.
enum ReplayTool {
    static func writeAppLog(at path: String, events count: Int, compacting: Bool = true) throws {
        var configuration = LogConfiguration()
        configuration.durability = .none
        configuration.compactsInBackground = false
        let log = try EventLog.open(at: path, configuration: configuration)
        var workload = Workload(seed: 2026, livePins: 1_000)
        try workload.produce(atLeast: count) { commit in
            _ = try log.append(contentsOf: commit.map { EventCodec.encode($0, cause: nil) })
        }
        if compacting { try log.compact() }
        try log.close()
        print("wrote \(workload.events) events to \(path)")
    }

    static func compact(_ path: String) throws {
        var configuration = LogConfiguration()
        configuration.compactsInBackground = false
        let log = try EventLog.open(at: path, configuration: configuration)
        let before = Measure.processorSeconds()
        let wall = try Measure.seconds { try log.compact() }
        let cpu = Measure.processorSeconds() - before
        try log.close()
        print("compacted \(path) in \(Figure.fixed(wall, 2)) s, \(Figure.fixed(cpu, 2)) s of CPU")
    }

    /// A store as the app leaves it: the workload's commits with a snapshot every `interval`
    /// events, then compacted.
    static func writeStore(at folder: String, events count: Int, interval: UInt64 = 10_000) async throws {
        let writer = try StoreWriter(folder: folder, interval: interval, seed: 2026)
        try await writer.write(upTo: count)
        let store = try await TouristStore.open(at: folder, options: writer.storeOptions)
        _ = try store.compactLog()
        try await store.close()
        print("wrote a store of \(writer.workload.events) events to \(folder)")
    }

    static func openStore(_ folder: String, times: Int) async throws {
        var options = StoreOptions()
        options.collectionInterval = nil
        var opens: [Double] = []
        for _ in 0..<max(1, times) {
            let start = ContinuousClock.now
            let store = try await TouristStore.open(at: folder, options: options)
            opens.append(Measure.seconds(since: start))
            try await store.close()
        }
        let reader = try StoreReader.open(at: folder)
        var states: [Double] = []
        for index in 1...20 {
            let sequence = reader.lastSequence * UInt64(index) / 21
            states.append(try Measure.seconds { _ = try reader.state(at: sequence) })
        }
        print("open: median \(Figure.milliseconds(Measure.median(opens))) of \(opens.count); state at 20 points: median "
            + "\(Figure.milliseconds(Measure.median(states))), slowest \(Figure.milliseconds(states.max() ?? 0))")
    }

    static func replayStages(_ path: String, times: Int) throws {
        var events = 0
        for (name, decode, apply) in [("read, check, decompress", false, false), ("… and decode", true, false), ("… and fold", true, true)] {
            let seconds = try Measure.best(of: times) {
                let run = try ReplayCases.stage(path, decode: decode, apply: apply)
                events = run.events
                return run.seconds
            }
            print("\(name): \(Figure.grouped(Double(events) / seconds))/s (\(Figure.fixed(seconds * 1e9 / Double(events), 0)) ns an event)")
        }
    }
}
