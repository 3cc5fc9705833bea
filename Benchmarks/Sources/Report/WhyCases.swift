import BenchKit
import Explanations
import Foundation
import SeededRandom
import VirtualTourist

/// `vt why` on the workload's store (docs/WHY.md; issue 50's target: any fact, at any point,
/// < 50 ms): each question about a random pin at a random point, as a command answers it (the
/// store's reader opened, then the answer), medians and the slowest of 20.
struct WhyCases {
    let options: Options
    let report: Report

    func run() async throws {
        report.section("why: the events behind a fact, at a random point")
        let folder = Measure.temporaryFolder("why")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writer = try StoreWriter(folder: folder, interval: options.snapshotInterval, seed: options.seed)
        try await writer.write(upTo: options.events)
        try writer.letCompactionCatchUp()
        let reader = try StoreReader.open(at: folder)
        let pins = try reader.droppedPins()
        let last = reader.lastSequence
        var random = SplitMix(seed: options.seed)
        let kinds: [(String, (PinID) -> WhyQuestion)] = [
            ("pin (where it is)", { .pin($0) }), ("album", { .album($0) }), ("New Collection", { .newCollection($0) }),
            ("photo (slot 0)", { .photo($0, slot: 0) }), ("region", { _ in .region }),
        ]
        for (name, question) in kinds {
            var times: [Double] = []
            for _ in 0..<20 {
                let pin = pins[Int.random(in: 0..<pins.count, using: &random)]
                let point = UInt64.random(in: 1...last, using: &random)
                times.append(try Measure.seconds {
                    let opened = try StoreReader.open(at: folder)
                    do { _ = try Explainer(reader: opened).answer(question(pin), at: point) } catch let error as DomainError where error.code == .unknownPin {
                        // A pin dropped after the point is still an answer ("not on the map yet").
                    }
                })
            }
            report.add(Row(
                what: "vt why \(name) at a random point: reader opened and answered (median of 20; slowest \(Figure.milliseconds(times.max()!)))",
                ours: Figure.milliseconds(Measure.median(times)), target: "< 50 ms", verdict: Target.atMost(times.max()!, 0.05)))
        }
        var opens: [Double] = []
        for _ in 0..<20 { opens.append(try Measure.seconds { _ = try StoreReader.open(at: folder) }) }
        report.add(Row(what: "… of which the reader opened (median of 20)", ours: Figure.milliseconds(Measure.median(opens))))
        var histories: [Double] = []
        for _ in 0..<20 {
            let pin = pins[Int.random(in: 0..<pins.count, using: &random)]
            histories.append(try Measure.seconds { _ = try reader.history(of: pin) })
        }
        report.add(Row(what: "… of which a pin's history read (median of 20)", ours: Figure.milliseconds(Measure.median(histories))))
        report.note("a pin's answers read its history through the key summaries and fold only its events; the region's reads back from the point, decoding only the events about no pin")
    }

    /// `vt-bench --why STORE`: 200 answers about random pins of a store written before, for a
    /// profiler (`perf record … vt-bench --why DIR`), with their median.
    static func breakdown(_ folder: String) throws {
        let reader = try StoreReader.open(at: folder)
        let pins = try reader.droppedPins()
        var random = SplitMix(seed: 7)
        var times: [Double] = []
        for _ in 0..<200 {
            let pin = pins[Int.random(in: 0..<pins.count, using: &random)]
            times.append(try Measure.seconds { _ = try Explainer(reader: reader).answer(.pin(pin)) })
        }
        print("vt why pin, 200 random pins of \(reader.lastSequence) events: median \(Figure.milliseconds(Measure.median(times))), slowest \(Figure.milliseconds(times.max()!))")
    }
}
