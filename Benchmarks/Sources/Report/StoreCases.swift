import BenchKit
import EventLog
import Foundation
import SeededRandom
import TouristWorkload
import VirtualTourist

/// Opening the store as its log grows (snapshots keep it flat), and the state at a random
/// sequence number, beside the peers: loading the mutable schema, and folding the SQLite events
/// table up to that point.
struct StoreCases {
    let options: Options
    let report: Report
    let workspace: Workspace

    func run() async throws {
        report.section("open with snapshots as the log grows, and state at a random sequence number")
        let folder = Measure.temporaryFolder("store")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writer = try StoreWriter(folder: folder, interval: options.snapshotInterval, seed: options.seed)
        let storeOptions = writer.storeOptions
        let checkpoints = (1...4).map { options.events * $0 / 4 }
        var opens: [(events: Int, pins: Int, photos: Int, seconds: Double)] = []
        var crashes: [(events: Int, fromCheckpoint: Double?, rehashing: Double)] = []
        for checkpoint in checkpoints {
            try await writer.write(upTo: checkpoint)
            try writer.letCompactionCatchUp()
            let workload = writer.workload
            var times: [Double] = []
            for _ in 0..<5 {
                let start = ContinuousClock.now
                let store = try await TouristStore.open(at: folder, options: storeOptions)
                times.append(Measure.seconds(since: start))
                precondition(store.state == workload.state, "the opened state differs from the generated one")
                try await store.close()
            }
            let photos = workload.state.pins.values.reduce(0) { $0 + $1.album.slots.count }
            opens.append((workload.events, workload.state.pins.count, photos, Measure.median(times)))
            crashes.append(try await openAfterACrash(writer))
        }

        _ = try workspace.written()
        let mutableLoad = try Measure.best(of: options.repeats) { try Measure.seconds { _ = try workspace.mutable.loadEverything() } }
        for (index, open) in opens.enumerated() {
            let last = index == opens.count - 1
            report.add(Row(
                what: "open with snapshots, log of \(Figure.grouped(Double(open.events))) events "
                    + "(\(Figure.grouped(Double(open.pins))) pins, \(Figure.grouped(Double(open.photos))) photos)",
                ours: Figure.milliseconds(open.seconds),
                peer: last ? Figure.milliseconds(mutableLoad) + " (load the mutable schema)" : "",
                ratio: last ? costRatio(open.seconds, mutableLoad) : "",
                target: last ? "< 30 ms for 1,000 pins and 130,000 photos, flat as the log grows" : "",
                verdict: last ? (open.seconds < 0.03 && flat(opens) ? .met : .missed) : nil))
        }

        for (index, crash) in crashes.enumerated() {
            let last = index == crashes.count - 1
            let opened = crash.fromCheckpoint ?? crash.rehashing
            let without = crash.fromCheckpoint == nil
                ? "no running tail checkpoint yet in the active segment"
                : "without the writer's running tail checkpoint: \(Figure.milliseconds(crash.rehashing))"
            report.add(Row(
                what: "open after a crash, log of \(Figure.grouped(Double(crash.events))) events, "
                    + "\(Figure.grouped(Double(options.snapshotInterval / 2))) past the last snapshot (\(without))",
                ours: Figure.milliseconds(opened),
                target: last ? "< 30 ms" : "", verdict: last ? (opened < 0.03 ? .met : .missed) : nil))
        }

        let firstCommit = try await firstCommitAfterAnOpen(writer)
        report.add(Row(
            what: "first commit right after an open, log of \(Figure.grouped(Double(writer.workload.events))) events "
                + "(it waits for the check of the tail checkpoint; once the check is done: \(Figure.milliseconds(firstCommit.later)))",
            ours: Figure.milliseconds(firstCommit.atOnce)))

        let reader = try StoreReader.open(at: folder, snapshotInterval: options.snapshotInterval)
        var random = SplitMix(seed: options.seed)
        var times: [Double] = []
        for _ in 0..<20 {
            let sequence = UInt64.random(in: 1...reader.lastSequence, using: &random)
            times.append(try Measure.seconds { _ = try reader.state(at: sequence) })
        }
        // The peer has no snapshots: the state at a point is a fold of every row before it.
        var peerTimes: [Double] = []
        for _ in 0..<3 {
            let sequence = UInt64.random(in: 1...UInt64(options.events), using: &random)
            peerTimes.append(try Measure.seconds { _ = try workspace.peerEncoded.replay(through: sequence) })
        }
        let median = Measure.median(times)
        report.add(Row(
            what: "state at a random sequence number (median of 20; slowest \(Figure.milliseconds(times.max() ?? 0)))",
            ours: Figure.milliseconds(median), peer: Figure.milliseconds(Measure.median(peerTimes)) + " (fold rows up to it)",
            ratio: costRatio(median, Measure.median(peerTimes)), target: "median < 30 ms, slowest < 60 ms",
            verdict: median < 0.03 && (times.max() ?? 0) < 0.06 ? .met : .missed))
    }

    /// Opens of what a kill -9 leaves half a snapshot interval after a snapshot (the store's
    /// own replays those events), median of 5: as left, starting from the writer's last
    /// running tail checkpoint, and with the checkpoint removed, rehashing the active segment
    /// as an open did before the writer left them. The two alternate, each on a fresh copy.
    /// (A crash within the first `tailCheckpointInterval` bytes of a segment finds none, and
    /// both figures are the same.)
    private func openAfterACrash(_ writer: StoreWriter) async throws -> (events: Int, fromCheckpoint: Double?, rehashing: Double) {
        let image = writer.folder + "-crash", attempt = writer.folder + "-attempt"
        defer { for path in [image, attempt] { try? FileManager.default.removeItem(atPath: path) } }
        let crashed = try await writer.leaveCrashImage(appending: Int(options.snapshotInterval) / 2, in: image)
        let checkpoints = try FileManager.default.contentsOfDirectory(atPath: image + "/log").filter { $0.hasSuffix(".head") }
        var fromCheckpoint: [Double] = [], rehashing: [Double] = []
        for _ in 0..<5 {
            for keepsCheckpoint in [true, false] {
                try? FileManager.default.removeItem(atPath: attempt)
                try StoreWriter.copyAsItIs(image, to: attempt)
                if !keepsCheckpoint { for name in checkpoints { try FileManager.default.removeItem(atPath: attempt + "/log/" + name) } }
                let start = ContinuousClock.now
                let store = try await TouristStore.open(at: attempt, options: writer.storeOptions)
                let seconds = Measure.seconds(since: start)
                precondition(store.state == crashed.state, "the state opened after a crash differs from the generated one")
                try await store.close()
                if keepsCheckpoint { fromCheckpoint.append(seconds) } else { rehashing.append(seconds) }
            }
        }
        return (crashed.events, checkpoints.isEmpty ? nil : Measure.median(fromCheckpoint), Measure.median(rehashing))
    }

    /// A durable commit (a region change) made as soon as the store is open, which waits for
    /// the background check of the tail checkpoint the open started from, and one made 300 ms
    /// later, when the check is done (FORMAT.md, "Tail checkpoint"); medians of 5, alternating,
    /// each on a fresh copy of the store.
    private func firstCommitAfterAnOpen(_ writer: StoreWriter) async throws -> (atOnce: Double, later: Double) {
        let attempt = writer.folder + "-attempt"
        defer { try? FileManager.default.removeItem(atPath: attempt) }
        let region = MapRegion(center: Coordinate(latitude: 48.85, longitude: 2.35), latitudeSpan: 1, longitudeSpan: 1)
        var atOnce: [Double] = [], later: [Double] = []
        for _ in 0..<5 {
            for waits in [false, true] {
                try? FileManager.default.removeItem(atPath: attempt)
                try StoreWriter.copyAsItIs(writer.folder, to: attempt)
                let store = try await TouristStore.open(at: attempt, options: writer.storeOptions)
                if waits { try await Task.sleep(for: .milliseconds(300)) }
                let start = ContinuousClock.now
                _ = try await store.changeRegion(to: region)
                let seconds = Measure.seconds(since: start)
                try await store.close()
                if waits { later.append(seconds) } else { atOnce.append(seconds) }
            }
        }
        return (Measure.median(atOnce), Measure.median(later))
    }

    /// Flat: what an open costs per live photo does not grow with the log (the last at most
    /// twice the first, with 5 ms for noise).
    private func flat(_ opens: [(events: Int, pins: Int, photos: Int, seconds: Double)]) -> Bool {
        guard let first = opens.first, let last = opens.last, first.photos > 0 else { return true }
        return last.seconds <= 2 * first.seconds * Double(last.photos) / Double(first.photos) + 0.005
    }
}
