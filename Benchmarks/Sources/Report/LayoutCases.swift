import BenchKit
import EventLog
import Foundation
import SeededRandom
import TouristWorkload
import VirtualTourist

/// Format 2's on-disk shapes on the app's own commits (docs/FORMAT.md, part "Format 2"): bytes
/// per event in the hot tail (one record per commit) and in sealed blocks, for both block
/// layouts, several zstd levels and block sizes, with the cost of writing and reading them and
/// of rehashing the event chain. It measures the codecs alone, in memory, so the layout can be
/// chosen before the writer uses it (docs/BENCHMARKS-JOURNAL.md, "Block layout").
struct LayoutCases {
    let options: Options
    let report: Report

    /// One commit as the app appends it: its events' payloads, all at one time.
    struct Commit {
        var time: Int64
        var payloads: [[UInt8]]
    }

    func run() throws {
        let commits = makeCommits()
        let events = Double(commits.reduce(0) { $0 + $1.payloads.count })
        let payloadBytes = Double(commits.reduce(0) { $0 + $1.payloads.reduce(0) { $0 + $1.count } })
        report.section("format 2 layouts on \(Figure.grouped(events)) events in \(Figure.grouped(Double(commits.count))) commits")
        report.add(Row(what: "format 2: payload bytes per event before any framing (protobuf envelopes)", ours: Figure.fixed(payloadBytes / events)))

        let tail = try hotTail(commits)
        report.add(Row(
            what: "format 2 hot tail: bytes per event, a record per commit (zstd at the log’s level where it shrinks a body)",
            ours: Figure.fixed(Double(tail) / events), target: "≤ 100", verdict: Target.atMost(Double(tail) / events, 100)))

        let levels: [Int32] = options.smoke ? [3] : [3, 9, 19]
        let sizes = options.smoke ? [1 << 20] : [256 << 10, 1 << 20, 4 << 20]
        var best: (bytes: Double, name: String)? = nil
        let encodings: [(layout: LogFormat.Layout, fieldColumns: Bool, name: String)] = [
            (.rows, false, "rows layout"), (.columns, false, "columns layout"),
            (.columns, true, "field columns (codec 2)"),
        ]
        for encoding in encodings {
            for level in levels {
                for size in sizes {
                    let measured = try blocks(
                        commits, layout: encoding.layout, fieldColumns: encoding.fieldColumns, level: level, blockSize: size)
                    let perEvent = Double(measured.bytes) / events
                    let name = "\(encoding.name), zstd \(level), blocks of \(size >> 10) KiB"
                    report.add(Row(
                        what: "format 2 blocks, \(name): bytes per event; write, read, rehash",
                        ours: "\(Figure.fixed(perEvent)); write \(perSecond(events / measured.write)), read \(perSecond(events / measured.read)), chain \(perSecond(events / measured.chain))",
                        target: "≤ 48", verdict: Target.atMost(perEvent, 48)))
                    if best == nil || perEvent < best!.bytes { best = (perEvent, name) }
                }
            }
        }
        if let best { report.note("Smallest block encoding: \(best.name), \(Figure.fixed(best.bytes)) bytes per event.") }
    }

    /// The workload's commits with times as the app would stamp them: each commit a few
    /// milliseconds after the one before (photo downloads arrive one by one).
    private func makeCommits() -> [Commit] {
        var workload = Workload(seed: options.seed, livePins: 1_000)
        var random = SplitMix(seed: options.seed ^ 0x5EED)
        var time: Int64 = 1_790_000_000_000_000
        var commits: [Commit] = []
        while workload.events < options.events {
            for commit in workload.nextSession() {
                time += Int64.random(in: 1_000...60_000, using: &random)
                commits.append(Commit(time: time, payloads: commit.map { EventCodec.encode($0, cause: nil) }))
            }
        }
        return commits
    }

    private func hotTail(_ commits: [Commit]) throws -> Int {
        let compressor = try ZstdCompressor(level: LogConfiguration().compressionLevel)
        var builder = TailRecordBuilder()
        var output: [UInt8] = []
        output.reserveCapacity(commits.count * 200)
        var time = LogFormat.timeBeforeFirstEvent
        for commit in commits {
            builder.reset(timeBefore: time)
            for payload in commit.payloads { builder.add(payload, at: commit.time) }
            builder.encode(compressor: compressor, into: &output)
            time = builder.lastTime
        }
        // One 136-byte segment header per 4 MiB segment.
        return output.count + (output.count / (4 << 20) + 1) * 136
    }

    private func blocks(
        _ commits: [Commit], layout: LogFormat.Layout, fieldColumns: Bool, level: Int32, blockSize: Int
    ) throws -> (bytes: Int, write: Double, read: Double, chain: Double) {
        let compressor = try ZstdCompressor(level: level)
        var output: [UInt8] = []
        var headers: [BlockHeader] = []
        let anchor = EventChain.anchor(logID: Array(repeating: 7, count: 16))
        let write = Measure.seconds {
            var builder = BlockBuilder(firstSequence: 1, timeBefore: LogFormat.timeBeforeFirstEvent, chainBefore: anchor)
            for commit in commits {
                for payload in commit.payloads {
                    if builder.rawPayloadBytes + payload.count > blockSize, builder.count > 0 {
                        headers.append(builder.encode(
                            layout: layout, compressor: compressor, payloadCodec: fieldColumns ? EventCodec.blockCodec : nil, into: &output))
                        builder = BlockBuilder(
                            firstSequence: builder.firstSequence + UInt64(builder.count), timeBefore: builder.lastTime,
                            chainBefore: builder.chainAfter)
                    }
                    builder.add(payload[...], at: commit.time)
                }
            }
            headers.append(builder.encode(
                layout: layout, compressor: compressor, payloadCodec: fieldColumns ? EventCodec.blockCodec : nil, into: &output))
        }
        // One 120-byte file header per 64 MiB block file.
        let bytes = output.count + (output.count / (64 << 20) + 1) * 120
        let decompressor = ZstdDecompressor()
        var decoded: [SealedBlock] = []
        var checksum = 0
        let read = try Measure.seconds {
            var position = 0
            try output.withUnsafeBytes { all in
                while position < all.count {
                    let header = try BlockHeader.decode(UnsafeRawBufferPointer(rebasing: all[position...])).get()
                    let stored = UnsafeRawBufferPointer(
                        rebasing: all[position + 116..<position + header.totalSize])
                    let block = try SealedBlock.decode(header, stored: stored, decompressor: decompressor, payloadCodec: EventCodec.blockCodec).get()
                    for event in block.events { checksum &+= event.payload.count }
                    if decoded.count < 64 { decoded.append(block) }
                    position += header.totalSize
                }
            }
        }
        precondition(checksum > 0)
        // Each block decoded untimed, then its chain rehashed under the clock: subtracting a
        // second read's time from a read-and-rehash gave noise, once even a negative time.
        var holds = true
        var chain = Measure.Stopwatch()
        var position = 0
        try output.withUnsafeBytes { all in
            while position < all.count {
                let header = try BlockHeader.decode(UnsafeRawBufferPointer(rebasing: all[position...])).get()
                let stored = UnsafeRawBufferPointer(rebasing: all[position + 116..<position + header.totalSize])
                let block = try SealedBlock.decode(header, stored: stored, decompressor: decompressor, payloadCodec: EventCodec.blockCodec).get()
                let blockHolds = chain.time { block.chainHolds() }
                holds = holds && blockHolds
                position += header.totalSize
            }
        }
        precondition(holds, "a block's chain does not hold")
        return (bytes, write, read, chain.seconds)
    }
}
