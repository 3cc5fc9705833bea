import BenchKit
import EventLog
import Foundation
import TouristWorkload
import VirtualTourist

/// Two modes for profiling replay on its own, without the rest of the run:
///
///   vt-bench --write-app-log DIR EVENTS    the workload as the app appends it, then compacted
///   vt-bench --replay-stages DIR [TIMES]   replays DIR by stages, best of TIMES, events/s
///
/// so `perf record … vt-bench --replay-stages DIR` profiles nothing but the replay.
enum ReplayTool {
    static func writeAppLog(at path: String, events count: Int) throws {
        var configuration = LogConfiguration()
        configuration.durability = .none
        configuration.compactsInBackground = false
        let log = try EventLog.open(at: path, configuration: configuration)
        var workload = Workload(seed: 2026, livePins: 1_000)
        try workload.produce(atLeast: count) { commit in
            _ = try log.append(contentsOf: commit.map { EventCodec.encode($0, cause: nil) })
        }
        try log.compact()
        try log.close()
        print("wrote \(workload.events) events to \(path)")
    }

    static func replayStages(_ path: String, times: Int) throws {
        var events = 0
        for (name, decode, apply) in [("read, check, decompress", false, false), ("… and decode", true, false), ("… and fold", true, true)] {
            let seconds = try Measure.best(of: times) {
                var state = TouristState()
                var checksum: UInt64 = 0
                var count = 0
                let seconds = try Measure.seconds {
                    let cursor = try LogReader(directory: path).events()
                    while let event = try cursor.next() {
                        count += 1
                        if decode {
                            let recorded = try EventCodec.decode(event)
                            if apply { state.apply(recorded) } else { checksum &+= recorded.sequence }
                        } else {
                            checksum &+= UInt64(event.payload.count)
                        }
                    }
                }
                precondition(checksum > 0 || state.sequence > 0)
                events = count
                return seconds
            }
            print("\(name): \(Figure.grouped(Double(events) / seconds))/s (\(Figure.fixed(seconds * 1e9 / Double(events), 0)) ns an event)")
        }
    }
}
