import FileIO
import Foundation

/// `verify` for a format-2 log (FORMAT.md, "The event chain", "Damage and recovery (format 2)"):
/// every block file's headers, checksums and links, every block decoded and its events rehashed
/// from its `chain_before` checkpoint (blocks in parallel, one per core), then the hot tail's
/// segments record by record, their events rehashed from where the blocks end, each segment's
/// `chain_before` and `time_before` checked against the chain, and the head at the end.
enum Format2Verifier {
    static func walk(
        directory: String, fileSystem: any FileSystem, report: inout VerificationReport,
        progress: ((Int64, Int64) -> Void)?
    ) throws {
        report.format = .v2
        var files = Format2Directory(directory: directory, fileSystem: fileSystem)
        do {
            try files.refresh()
        } catch let error as LogError where error.code != .io {
            report.problems.append(.init(kind: .corruption, file: error.file ?? directory, offset: error.offset, sequence: error.sequence, message: error.message))
            return
        }
        guard let anchor = files.anchor else { return }
        var total: Int64 = 0
        for file in files.files { total += (try? fileSystem.status(file.path))??.size ?? 0 }
        var done: Int64 = 0

        // Block files: headers and links in order, then the blocks' events in parallel.
        var chain = anchor
        var time = Format2.timeBeforeFirstEvent
        var next: UInt64 = 1
        var blocks: [(path: String, offset: Int64, header: BlockHeader)] = []
        for file in files.files {
            guard case .blocks(let header) = file.kind else { continue }
            report.blockFiles += 1
            do {
                let scanner = try BlockFileScanner(path: file.path, header: header, fileSystem: fileSystem)
                while let block = try scanner.next(expectChain: chain, expectTime: time) {
                    blocks.append((file.path, block.offset, block.header))
                }
                chain = scanner.chain ?? chain
                time = scanner.time ?? time
                next = header.lastSequence + 1
            } catch let error as LogError where error.code != .io {
                report.problems.append(.init(kind: .corruption, file: file.path, offset: error.offset, sequence: error.sequence, message: error.message))
                return
            }
            let size = (try? fileSystem.status(file.path))??.size ?? 0
            report.blockBytes += size
            done += size
        }
        if let problem = rehash(blocks, fileSystem: fileSystem, report: &report) {
            report.problems.append(problem)
            return
        }
        if let last = blocks.last {
            report.lastSequence = last.header.lastSequence
            report.headHash = last.header.chainAfter
        }
        progress?(done, total)

        // The hot tail: every record, every event hashed on from the blocks' end.
        var running = EventChain(head: chain, after: next - 1)
        let decompressor = ZstdDecompressor()
        let segments = files.files.filter { $0.kind == .segment }
        for (position, file) in segments.enumerated() {
            report.segments += 1
            let scanner: TailScanner
            do {
                scanner = try TailScanner.open(path: file.path, fileSystem: fileSystem, decompressor: decompressor)
            } catch let error as LogError where error.code != .io {
                report.problems.append(.init(kind: .corruption, file: file.path, offset: 0, sequence: file.firstSequence, message: error.message))
                return
            }
            defer { scanner.close() }
            guard scanner.header.firstSequence == next, scanner.header.timeBefore == time,
                scanner.header.chainBefore == running.head
            else {
                report.problems.append(.init(
                    kind: .corruption, file: file.path, offset: 0, sequence: next,
                    message: "the segment's header does not continue the log before it (its first sequence, time_before or chain_before is not where the events before it end)"))
                return
            }
            report.checkpoints += 1
            scan: while true {
                switch try scanner.next() {
                case .record(let record, _):
                    var events = record.run.makeIterator(firstSequence: running.sequence + 1)
                    while let event = events.next() { running.append(time: event.timestamp, payload: event.payload) }
                    report.records += 1
                    report.events += UInt64(record.eventCount)
                    report.rawBytes += Int64(record.run.raw.count)
                    report.tailBytes += Int64(record.size)
                case .end:
                    break scan
                case .damaged(let offset, let reason, let definite):
                    let isLast = position == segments.count - 1
                    let torn = try scanner.isTornTail(at: offset, definite: definite, isLastSegment: isLast)
                    report.problems.append(.init(
                        kind: torn ? .tornTail : .corruption, file: file.path, offset: offset, sequence: scanner.nextSequence,
                        message: torn
                            ? "an incomplete last record (\(reason)): an append in progress, or a crash that opening the log for writing will recover"
                            : reason))
                    break scan
                }
            }
            report.tailBytes += Int64(Format2.segmentHeaderSize)
            next = scanner.nextSequence
            time = scanner.time
            report.lastSequence = next - 1
            report.headHash = running.head
            done += (try? fileSystem.status(file.path))??.size ?? 0
            progress?(done, total)
            if report.problems.contains(where: { $0.kind == .corruption }) { return }
        }
        if report.headHash == nil { report.headHash = anchor }
        // The log's bytes as files: block files whole (headers included), segments as scanned.
        report.storedBytes = report.blockBytes + report.tailBytes
    }

    /// Decodes and rehashes every block from its own checkpoint, the work shared out between
    /// the cores. Returns the first problem in log order.
    private static func rehash(
        _ blocks: [(path: String, offset: Int64, header: BlockHeader)], fileSystem: any FileSystem,
        report: inout VerificationReport
    ) -> VerificationReport.Problem? {
        guard !blocks.isEmpty else { return nil }
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, blocks.count))
        let results = ResultSlots(count: blocks.count)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let decompressor = ZstdDecompressor()
            var opened: [String: any RandomAccessFile] = [:]
            defer { for file in opened.values { try? file.close() } }
            var index = worker
            while index < blocks.count {
                let (path, offset, header) = blocks[index]
                defer { index += workers }
                do {
                    let file = try opened[path] ?? fileSystem.openFile(path, .readOnly)
                    opened[path] = file
                    let stored = try file.read(count: Int(header.storedLength), at: offset + Int64(Format2.blockHeaderSize))
                    let decoded = stored.withUnsafeBytes { SealedBlock.decode(header, stored: $0, decompressor: decompressor) }
                    switch decoded {
                    case .failure(let reason): results.set(index, .failure(BlockProblem(message: reason.description)))
                    case .success(let block):
                        results.set(index, block.chainHolds()
                            ? .success((Int(header.rawLength), block.erasedSequences.count))
                            : .failure(BlockProblem(message: "the block's events do not rehash to its chain_after: an event was changed")))
                    }
                } catch {
                    results.set(index, .failure(BlockProblem(message: "cannot read the block: \(error)")))
                }
            }
        }
        for (index, block) in blocks.enumerated() {
            switch results.get(index) {
            case .failure(let problem):
                return .init(kind: .corruption, file: block.path, offset: block.offset, sequence: block.header.firstSequence, message: problem.message)
            case .success(let (raw, erased)):
                report.blocks += 1
                report.checkpoints += 1
                report.events += UInt64(block.header.eventCount)
                report.erasedEvents += erased
                report.rawBytes += Int64(raw)
            }
        }
        return nil
    }

    struct BlockProblem: Error { let message: String }

    /// One result per block, written by the workers.
    private final class ResultSlots: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Result<(Int, Int), BlockProblem>]

        init(count: Int) { slots = Array(repeating: .failure(BlockProblem(message: "not checked")), count: count) }

        func set(_ index: Int, _ result: Result<(Int, Int), BlockProblem>) { lock.withLock { slots[index] = result } }

        func get(_ index: Int) -> Result<(Int, Int), BlockProblem> { lock.withLock { slots[index] } }
    }
}
