import BenchKit
import EventLog
import Foundation
import VirtualTourist

/// Cold replay (read, check, decompress, decode, fold) of the written workload, its stages,
/// the memory it needs, and the bytes each store takes per event.
struct ReplayCases {
    let options: Options
    let report: Report
    let workspace: Workspace

    func run() throws {
        let written = try workspace.written()
        let events = Double(written.events)
        report.section("cold replay of \(WorkloadSize.name(options.events)) events (files in the page cache)")

        // Memory in a process of its own, so nothing this one did before shows in its figures.
        if let memory = try replayMemory(workspace.sessionLog) {
            report.add(Row(
                what: "memory during replay: peak above the process's start", ours: Figure.mebibytes(Double(memory.peak)),
                target: "the projection plus O(one batch)", verdict: memory.peak - memory.held < 16 * 1_048_576 ? .met : .missed))
            report.note("Replay memory (a fresh process replaying the session log): the state held at the end takes "
                + "\(Figure.mebibytes(Double(memory.held))) above the process's start; the peak went "
                + "\(Figure.mebibytes(Double(memory.peak - memory.held))) above that (the batch in hand, allocator slack). "
                + "The verdict asks that this excess stay under 16 MiB at every size.")
        }
        let replayed = try Fixtures.replay(workspace.sessionLog)
        precondition(replayed == written.state, "the replayed state differs from the generated one")

        let verified = try LogVerifier.verify(directory: workspace.sessionLog, payloadCodec: EventCodec.blockCodec)
        let read = try Measure.best(of: options.repeats) { try stage(workspace.sessionLog, decode: false, apply: false) }
        let decode = try Measure.best(of: options.repeats) { try stage(workspace.sessionLog, decode: true, apply: false) }
        let cold = try Measure.best(of: options.repeats) { try stage(workspace.sessionLog, decode: true, apply: true) }
        let peer = try Measure.best(of: options.repeats) {
            try Measure.seconds {
                let state = try workspace.peerEncoded.replay()
                precondition(state == written.state, "the peer's replayed state differs")
            }
        }
        let peerJSON = try Measure.best(of: options.repeats) {
            try Measure.seconds {
                let state = try workspace.peerJSON.replay()
                precondition(state == written.state, "the peer's replayed state differs")
            }
        }
        report.add(Row(
            what: "cold replay, a batch per session: read, check, decompress, decode, fold", ours: perSecond(events / cold),
            peer: perSecond(events / peer) + " (SELECT, decode, fold)", ratio: rateRatio(events / cold, events / peer),
            target: "≥ 2,000,000/s", verdict: Target.atLeast(events / cold, 2_000_000)))
        report.add(Row(
            what: "… the peer storing JSON", ours: perSecond(events / cold), peer: perSecond(events / peerJSON),
            ratio: rateRatio(events / cold, events / peerJSON)))
        report.add(Row(
            what: "… the same replay in MB/s (from disk; of events before compression)",
            ours: "\(Figure.fixed(Double(verified.storedBytes) / cold / 1e6)) MB/s; \(Figure.fixed(Double(verified.rawBytes) / cold / 1e6)) MB/s"))
        report.add(Row(what: "… stage: read, check CRCs and chain, decompress", ours: perSecond(events / read)))
        report.add(Row(what: "… stage: and decode each protobuf envelope", ours: perSecond(events / decode)))
        let hotTail = try Measure.best(of: options.repeats) { try stage(workspace.commitLog, decode: true, apply: true) }
        report.add(Row(
            what: "cold replay as the app appends (a commit per record), hot tail before compaction", ours: perSecond(events / hotTail),
            peer: perSecond(events / peer), ratio: rateRatio(events / hotTail, events / peer)))
        let compacted = try Measure.best(of: options.repeats) { try stage(workspace.compactedLog, decode: true, apply: true) }
        report.add(Row(
            what: "cold replay as the app appends, after the store's compaction", ours: perSecond(events / compacted),
            peer: perSecond(events / peer), ratio: rateRatio(events / compacted, events / peer),
            target: "≥ 1,500,000/s", verdict: Target.atLeast(events / compacted, 1_500_000)))
        let compactedRead = try Measure.best(of: options.repeats) { try stage(workspace.compactedLog, decode: false, apply: false) }
        report.add(Row(what: "… stage: read, check CRCs and chain links, decompress", ours: perSecond(events / compactedRead)))
        let perMillion = written.compactionCPU / events * 1e6
        report.add(Row(
            what: "compaction of the app's log (the store's own, as `vt compact`): CPU per 1 M events",
            ours: "\(Figure.fixed(perMillion, 2)) s (\(Figure.fixed(written.compactionSeconds, 2)) s wall for all)",
            target: "< 2 s", verdict: perMillion < 2 ? .met : .missed))

        report.section("bytes on disk")
        let sessionBytes = Double(Measure.folderBytes(workspace.sessionLog))
        let commitBytes = Double(Measure.folderBytes(workspace.commitLog))
        let compactedBytes = Double(Measure.folderBytes(workspace.compactedLog))
        let encodedBytes = Double(try workspace.peerEncoded.bytesOnDisk())
        let jsonBytes = Double(try workspace.peerJSON.bytesOnDisk())
        report.add(Row(
            what: "bytes on disk per event, a batch per session", ours: Figure.fixed(sessionBytes / events),
            peer: Figure.fixed(encodedBytes / events) + " (encoded bytes)", ratio: costRatio(sessionBytes, encodedBytes),
            target: "≤ 30 and ≤ ¼ of the peer's file",
            verdict: sessionBytes / events <= 30 && sessionBytes * 4 <= encodedBytes ? .met : .missed))
        report.add(Row(
            what: "… the peer storing JSON", ours: Figure.fixed(sessionBytes / events), peer: Figure.fixed(jsonBytes / events),
            ratio: costRatio(sessionBytes, jsonBytes)))
        report.add(Row(
            what: "bytes on disk per event as the app appends, hot tail before compaction", ours: Figure.fixed(commitBytes / events),
            peer: Figure.fixed(encodedBytes / events), ratio: costRatio(commitBytes, encodedBytes),
            target: "≤ 100", verdict: Target.atMost(commitBytes / events, 100)))
        report.add(Row(
            what: "bytes on disk per event as the app appends, after the store's compaction", ours: Figure.fixed(compactedBytes / events),
            peer: Figure.fixed(encodedBytes / events), ratio: costRatio(compactedBytes, encodedBytes),
            target: "≤ 48 and ≤ ¼ of the peer's table",
            verdict: compactedBytes / events <= 48 && compactedBytes * 4 <= encodedBytes ? .met : .missed))
        report.add(Row(
            what: "… for reference: before compression (protobuf envelopes)", ours: Figure.fixed(Double(verified.rawBytes) / events)))
        let mutableBytes = Double(try workspace.mutable.bytesOnDisk())
        report.add(Row(
            what: "the Core-Data-style peer's whole file (the live state only, no history)",
            ours: Figure.mebibytes(sessionBytes) + " (all history)", peer: Figure.mebibytes(mutableBytes)))
    }

    /// Seconds to read every event of `path`, and to decode and fold it when asked.
    private func stage(_ path: String, decode: Bool, apply: Bool) throws -> Double {
        try Self.stage(path, decode: decode, apply: apply).seconds
    }

    /// Reads every event of `path`, decoding and folding it when asked: the seconds it took
    /// and the events read (also `vt-bench --replay-stages`).
    static func stage(_ path: String, decode: Bool, apply: Bool) throws -> (seconds: Double, events: Int) {
        var state = TouristState()
        var checksum: UInt64 = 0
        var events = 0
        let seconds = try Measure.seconds {
            let cursor = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).events()
            while let event = try cursor.next() {
                events += 1
                if decode {
                    let recorded = try EventCodec.decode(event)
                    if apply { state.apply(recorded) } else { checksum &+= recorded.sequence }
                } else {
                    checksum &+= UInt64(event.payload.count)
                }
            }
        }
        precondition(checksum > 0 || state.sequence > 0, "nothing was replayed")
        return (seconds, events)
    }

    /// Runs `vt-bench --replay-memory PATH` and reads its answer: bytes held after the replay
    /// and the peak, both above the child's resident memory before it started replaying.
    private func replayMemory(_ path: String) throws -> (held: Int, peak: Int)? {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--replay-memory", path]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        let numbers = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard child.terminationStatus == 0, numbers.count == 2 else { return nil }
        return (numbers[0], numbers[1])
    }
}

/// The child's side of ``ReplayCases``' memory figure: replay `path`, keep the state, print
/// "held peak" in bytes above the resident memory before the replay.
func measureReplayMemory(_ path: String) throws {
    guard let before = Measure.residentMemory(), Measure.resetPeakMemory() else { exit(3) }
    let state = try Fixtures.replay(path)
    guard let after = Measure.residentMemory() else { exit(3) }
    print(after.current - before.current, after.peak - before.current)
    withExtendedLifetime(state) {}
}
