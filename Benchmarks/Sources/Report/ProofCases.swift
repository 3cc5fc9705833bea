import BenchKit
import EventLog
import Foundation
import HistoryProofs
import Proofs
import SeededRandom
import VirtualTourist

/// Proofs about the workload's log (docs/PROOFS.md, "Targets" of issue 50): the first head,
/// which makes the chunks' roots file; inclusion and consistency proofs at random points, made
/// from that file and checked; their size; what the file costs on disk.
struct ProofCases {
    let options: Options
    let report: Report

    func run() async throws {
        report.section("proofs: inclusion and consistency proofs, made and checked")
        let folder = Measure.temporaryFolder("proofs")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writer = try StoreWriter(folder: folder, interval: options.snapshotInterval, seed: options.seed)
        try await writer.write(upTo: options.events)
        try writer.letCompactionCatchUp()
        let rootsFile = folder + "/proofs/log.roots"
        func tree() throws -> LogTree {
            try LogTree(reader: try LogReader(directory: folder + "/log", payloadCodec: EventCodec.blockCodec), rootsFile: rootsFile)
        }
        let size = try tree().size

        var root = TreeHash.empty
        let first = try Measure.seconds { root = try tree().root() }
        report.add(Row(
            what: "the first vt head of \(Figure.grouped(Double(size))) events (reads every event, makes the roots file)",
            ours: Figure.milliseconds(first)))
        var rootAgain = TreeHash.empty
        let again = try Measure.seconds { rootAgain = try tree().root() }
        precondition(rootAgain == root, "the roots file gave another root")
        report.add(Row(what: "vt head again (the roots file, the last chunk's events)", ours: Figure.milliseconds(again)))

        var random = SplitMix(seed: options.seed)
        var made: [Double] = [], checked: [Double] = [], bytes = 0
        for _ in 0..<20 {
            let sequence = UInt64.random(in: 1...size, using: &random)
            var proof: ProofFile? = nil
            made.append(try Measure.seconds { proof = try tree().inclusion(of: sequence) })
            precondition(proof!.root == root, "a proof of another root")
            checked.append(Measure.seconds { precondition(proof!.verify()) })
            bytes = max(bytes, 32 * proof!.path.count)
        }
        let bound = 32 * Int(ceil(log2(Double(size))))
        report.add(Row(
            what: "inclusion proof: hashes in it, the most of 20", ours: "\(bytes) B", target: "≤ 32 × ⌈log₂ n⌉ = \(bound) B",
            verdict: Target.atMost(Double(bytes), Double(bound))))
        report.add(Row(
            what: "inclusion proof of a random event: made (median of 20; slowest \(Figure.milliseconds(made.max()!)))",
            ours: Figure.milliseconds(Measure.median(made)), target: "< 50 ms", verdict: Target.atMost(made.max()!, 0.05)))
        report.add(Row(
            what: "… checked (median of 20)", ours: Figure.milliseconds(Measure.median(checked)), target: "< 5 ms",
            verdict: Target.atMost(checked.max()!, 0.005)))

        var consistency: [Double] = []
        for _ in 0..<20 {
            let old = UInt64.random(in: 1...size, using: &random)
            var proof: ProofFile? = nil
            consistency.append(try Measure.seconds { proof = try tree().consistency(from: old) })
            precondition(proof!.verify() && proof!.root == root)
        }
        report.add(Row(
            what: "consistency proof from a random size: made (median of 20; slowest \(Figure.milliseconds(consistency.max()!)))",
            ours: Figure.milliseconds(Measure.median(consistency)), target: "< 50 ms", verdict: Target.atMost(consistency.max()!, 0.05)))

        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: rootsFile)[.size] as? Int) ?? 0
        let perEvent = Double(fileBytes) / Double(size)
        report.add(Row(
            what: "the roots file on disk, per event", ours: Figure.fixed(perEvent, 3) + " B", target: "≤ 1 B",
            verdict: Target.atMost(perEvent, 1)))
        report.note("the writer never touches the tree: appending, replaying and opening are what they were (the file is made by the first proof or head)")
    }

    /// `vt-bench --prove STORE`: where a proof's time goes in a store written before (its log
    /// opened, its size read, the roots read, a head, an inclusion proof), medians of 20.
    static func breakdown(_ folder: String) throws {
        let path = folder + "/log", rootsFile = folder + "/proofs/log.roots"
        func median(_ body: () throws -> Void) rethrows -> String {
            var times: [Double] = []
            for _ in 0..<20 { times.append(try Measure.seconds(body)) }
            return Figure.milliseconds(Measure.median(times))
        }
        let size = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).lastSequence()
        _ = try LogTree(reader: try LogReader(directory: path, payloadCodec: EventCodec.blockCodec), rootsFile: rootsFile).root()
        print("open the log's reader: \(try median { _ = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec) })")
        print("… and its identity and last sequence: \(try median { let reader = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec); _ = try reader.identity(); _ = try reader.lastSequence() })")
        print("read the roots file: \(median { _ = TreeRoots(path: rootsFile, logID: [UInt8](repeating: 0, count: 16)) })")
        print("the last partial chunk's \(size % TreeRoots.chunk) events, read and hashed: \(try median { let cursor = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).events(from: size - size % TreeRoots.chunk + 1); while let event = try cursor.next() { _ = LogTree.leaf(of: event) } })")
        print("a whole chunk in the middle, read and hashed: \(try median { let cursor = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).events(from: size / 2 / 4096 * 4096 + 1, through: size / 2 / 4096 * 4096 + 4096); while let event = try cursor.next() { _ = LogTree.leaf(of: event) } })")
        print("vt head (a new tree each time): \(try median { _ = try LogTree(reader: try LogReader(directory: path, payloadCodec: EventCodec.blockCodec), rootsFile: rootsFile).root() })")
        print("inclusion proof of the middle event: \(try median { _ = try LogTree(reader: try LogReader(directory: path, payloadCodec: EventCodec.blockCodec), rootsFile: rootsFile).inclusion(of: size / 2) })")
    }
}
