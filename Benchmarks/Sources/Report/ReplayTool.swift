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
///   vt-bench --append-sessions DIR EVENTS  buffered appends of the workload, a batch per
///                                          session, no compaction: events/s of the appends
///   vt-bench --encode-blocks DIR [TIMES]   encodes DIR's events into 1 MiB blocks (codec 2,
///                                          then codec 1), best of TIMES, ns an event
///   vt-bench --replay-stages DIR [TIMES]   replays DIR by stages, best of TIMES, events/s
///   vt-bench --write-store DIR EVENTS      a whole store (log and snapshots) of the workload,
///                                          for Benchmarks/scripts/slider
///   vt-bench --open-store DIR [TIMES]      opens it TIMES times, and the state at 20 points
///   vt-bench --commit-on DIR [ACTIONS]     durable actions on it, by what they change (CommitTool)
///   vt-bench --crash-image DIR EVENTS IMAGE  a store of EVENTS, then half a snapshot interval
///                                          more and what a kill -9 leaves of it, in IMAGE
///   vt-bench --open-crashed IMAGE [TIMES]  opens fresh copies of IMAGE, TIMES times
///
/// so `perf record … vt-bench --replay-stages DIR` profiles nothing but the replay, and
/// `--compact` on a fresh copy of a `--write-hot-tail` folder nothing but a compaction.
enum ReplayTool {
    static func writeAppLog(at path: String, events count: Int, compacting: Bool = true) throws {
        var configuration = LogConfiguration()
        configuration.payloadCodec = EventCodec.blockCodec
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
        configuration.payloadCodec = EventCodec.blockCodec
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

    static func writeCrashImage(at folder: String, events count: Int, image: String, interval: UInt64 = 10_000) async throws {
        let writer = try StoreWriter(folder: folder, interval: interval, seed: 2026)
        try await writer.write(upTo: count)
        try writer.letCompactionCatchUp()
        let crashed = try await writer.leaveCrashImage(appending: Int(interval) / 2, in: image)
        print("left what a crash leaves of a store of \(crashed.events) events in \(image)")
    }

    /// Opens of a crash image as the store cases time them ("open after a crash"), each on a
    /// fresh copy; only the opens are timed, so a profile of this mode is mostly theirs.
    static func openCrashed(_ image: String, times: Int) async throws {
        let attempt = image + "-attempt"
        defer { try? FileManager.default.removeItem(atPath: attempt) }
        var options = StoreOptions()
        options.collectionInterval = nil
        var opens: [Double] = []
        for _ in 0..<max(1, times) {
            try? FileManager.default.removeItem(atPath: attempt)
            try StoreWriter.copyAsItIs(image, to: attempt)
            let start = ContinuousClock.now
            let store = try await TouristStore.open(at: attempt, options: options)
            opens.append(Measure.seconds(since: start))
            try await store.close()
        }
        print("open after a crash: median \(Figure.milliseconds(Measure.median(opens))) of \(opens.count), "
            + "fastest \(Figure.milliseconds(opens.min() ?? 0)), slowest \(Figure.milliseconds(opens.max() ?? 0))")
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

    /// Times `LogVerifier.verify` of a store's log (read, check, decompress and rehash every
    /// event) without a key function and with the store's (each key summary also compared with
    /// its blocks' events), in turns, best of `times` each.
    static func verifyLog(_ path: String, times: Int) throws {
        var without = Double.infinity, with = Double.infinity
        var events: UInt64 = 0
        for _ in 0..<max(1, times) {
            without = min(without, try Measure.seconds {
                let report = try LogVerifier.verify(directory: path, payloadCodec: EventCodec.blockCodec)
                precondition(report.isClean, "the log does not verify: \(report.problems)")
                events = report.events
            })
            with = min(with, try Measure.seconds {
                let report = try LogVerifier.verify(directory: path, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
                precondition(report.isClean, "the log does not verify with its key summaries: \(report.problems)")
            })
        }
        print("verify, \(Figure.grouped(Double(events))) events: \(Figure.milliseconds(without)) without the key function, "
            + "\(Figure.milliseconds(with)) comparing the key summaries (\(Figure.fixed(with / without, 3))×)")
    }

    /// Times the block encoders alone: the events are read and hashed into builders first, so
    /// the figure is the field form, the layout and zstd, with nothing of the disk or the chain.
    static func encodeBlocks(_ path: String, times: Int) throws {
        var builders: [BlockBuilder] = []
        var builder: BlockBuilder? = nil
        var events = 0
        let cursor = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).events()
        while let event = try cursor.next() {
            if builder == nil || builder!.rawPayloadBytes + event.payload.count > 1 << 20 {
                if let full = builder { builders.append(full) }
                builder = BlockBuilder(
                    firstSequence: event.sequence, timeBefore: event.timestamp.microsecondsSinceEpoch,
                    chainBefore: EventChain.anchor(logID: [UInt8](repeating: 7, count: 16)))
            }
            builder!.add(event.payload, at: event.timestamp.microsecondsSinceEpoch)
            events += 1
        }
        if let last = builder { builders.append(last) }
        let compressor = try ZstdCompressor(level: 3)
        for (name, fieldColumns) in [("field columns (codec 2)", true), ("zstd alone (codec 1)", false)] {
            var bytes = 0
            let seconds = Measure.best(of: max(1, times)) {
                var scratch = BlockScratch(payloadCodec: fieldColumns ? EventCodec.blockCodec : nil)
                var output: [UInt8] = []
                return Measure.seconds {
                    for block in builders {
                        output.removeAll(keepingCapacity: true)
                        block.encode(layout: .columns, compressor: compressor, scratch: &scratch, into: &output)
                        bytes += output.count
                    }
                }
            }
            print("\(name): \(Figure.fixed(seconds * 1e9 / Double(events), 0)) ns an event, best of \(max(1, times)) "
                + "(\(Figure.fixed(Double(bytes) / Double(max(1, times)) / Double(events), 1)) bytes an event)")
        }
    }

    /// Times buffered appends alone, as the report's "a batch per session" case makes them but
    /// with no compaction beside them: the payloads are encoded first.
    static func appendSessions(at path: String, events count: Int) throws {
        var workload = Workload(seed: 2026, livePins: 1_000)
        var sessions: [[[UInt8]]] = []
        while workload.events < count {
            sessions.append(workload.nextSession().flatMap { $0 }.map { EventCodec.encode($0, cause: nil) })
        }
        var configuration = LogConfiguration()
        configuration.payloadCodec = EventCodec.blockCodec
        configuration.durability = .none
        configuration.compactsInBackground = false
        let log = try EventLog.open(at: path, configuration: configuration)
        let seconds = try Measure.seconds {
            for session in sessions { _ = try log.append(contentsOf: session) }
        }
        try log.close()
        print("appended \(workload.events) events in \(sessions.count) batches: \(Figure.grouped(Double(workload.events) / seconds))/s")
    }
}
