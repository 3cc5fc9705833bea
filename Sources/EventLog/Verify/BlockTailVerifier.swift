import FileIO
import Foundation

/// `verify` for a format-2 log (FORMAT.md, "The event chain", "Damage and recovery (format 2)"):
/// every block file's headers, checksums and links, every block decoded and its events rehashed
/// from its `chain_before` checkpoint (blocks in parallel, one per core), then the hot tail's
/// segments record by record, their events rehashed from where the blocks end, each segment's
/// `chain_before` and `time_before` checked against the chain, and the head at the end. With a
/// key function, each block file's usable key summary is compared, block by block, with the
/// keys of the events the block decodes to.
enum BlockTailVerifier {
    /// A block to rehash, and its entry in its file's summary (nil: not checked).
    struct BlockToCheck {
        var path: String
        var offset: Int64
        var header: BlockHeader
        /// The first sequence of the block file, which names its summary.
        var fileFirstSequence: UInt64
        /// The summary's entry for this block (it must start at the block's start).
        var entry: KeySummary.Block?
    }

    static func walk(
        directory: String, fileSystem: any FileSystem, keys: BlockKeys? = nil, payloadCodec: (any BlockPayloadCodec)?,
        report: inout VerificationReport,
        progress: ((Int64, Int64) -> Void)?
    ) throws {
        report.format = .v2
        var files = LogDirectory(directory: directory, fileSystem: fileSystem)
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
        var time = LogFormat.timeBeforeFirstEvent
        var next: UInt64 = 1
        var blocks: [BlockToCheck] = []
        for file in files.files {
            guard case .blocks(let header) = file.kind else { continue }
            report.blockFiles += 1
            // A summary that fails its own checks is not used by readers: only usable ones matter.
            let summary = keys.flatMap { KeySummary.read(beside: header, in: directory, function: $0.name, fileSystem: fileSystem) }
            let summaryPath = KeySummary.path(directory, header.firstSequence)
            if keys != nil, summary == nil, (try? fileSystem.status(summaryPath)) ?? nil != nil {
                report.notes.append(
                    "\(summaryPath): a key summary that fails its checks (derived data: readers do not use it, so a question about a key reads every block of its file; the next compaction or open for changes writes it again)")
            }
            let firstBlock = blocks.count
            do {
                let scanner = try BlockFileScanner(path: file.path, header: header, fileSystem: fileSystem)
                while let block = try scanner.next(expectChain: chain, expectTime: time) {
                    let entry = summary?.blocks[blocks.count - firstBlock]
                    blocks.append(BlockToCheck(
                        path: file.path, offset: block.offset, header: block.header, fileFirstSequence: header.firstSequence,
                        entry: entry))
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
        if let problem = rehash(
            blocks, keys: keys, payloadCodec: payloadCodec, directory: directory, fileSystem: fileSystem, report: &report) {
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
            if files.tailCheckpoints.contains(file.firstSequence),
                TailCheckpoint.read(for: scanner.header, in: directory, fileSystem: fileSystem) == nil
            {
                report.notes.append(
                    "\(TailCheckpoint.path(directory, file.firstSequence)): a tail checkpoint that fails its checks (derived data: the next open for changes reads the segment from its start instead, and removes it)")
            }
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
            report.tailBytes += Int64(LogFormat.segmentHeaderSize)
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
    /// the cores, and compares its keys with its summary's. Returns the first damage in log
    /// order; key-summary problems go into `report` (one a file).
    private static func rehash(
        _ blocks: [BlockToCheck], keys: BlockKeys?, payloadCodec: (any BlockPayloadCodec)?, directory: String,
        fileSystem: any FileSystem, report: inout VerificationReport
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
                let (path, offset, header) = (blocks[index].path, blocks[index].offset, blocks[index].header)
                defer { index += workers }
                do {
                    let file = try opened[path] ?? fileSystem.openFile(path, .readOnly)
                    opened[path] = file
                    let stored = try file.read(count: Int(header.storedLength), at: offset + Int64(LogFormat.blockHeaderSize))
                    let decoded = stored.withUnsafeBytes { SealedBlock.decode(header, stored: $0, decompressor: decompressor, payloadCodec: payloadCodec) }
                    switch decoded {
                    case .failure(let reason): results.set(index, .failure(BlockProblem(message: reason.description)))
                    case .success(let block):
                        guard block.chainHolds() else {
                            results.set(index, .failure(BlockProblem(message: "the block's events do not rehash to its chain_after: an event was changed")))
                            break
                        }
                        var checked = BlockChecked(rawLength: Int(header.rawLength), erased: block.erasedSequences.count)
                        if let keys, let entry = blocks[index].entry {
                            checked.keyMismatch = KeyMismatch(
                                block.distinctKeys(keys), summarized: entry.keys, entryStart: entry.firstSequence, blockStart: header.firstSequence)
                        }
                        results.set(index, .success(checked))
                    }
                } catch {
                    results.set(index, .failure(BlockProblem(message: "cannot read the block: \(error)")))
                }
            }
        }
        var summariesReported = Set<String>()
        for (index, block) in blocks.enumerated() {
            switch results.get(index) {
            case .failure(let problem):
                return .init(kind: .corruption, file: block.path, offset: block.offset, sequence: block.header.firstSequence, message: problem.message)
            case .success(let checked):
                report.blocks += 1
                report.checkpoints += 1
                report.events += UInt64(block.header.eventCount)
                report.erasedEvents += checked.erased
                report.rawBytes += Int64(checked.rawLength)
                guard let mismatch = checked.keyMismatch else { continue }
                let summaryPath = KeySummary.path(directory, block.fileFirstSequence)
                guard summariesReported.insert(summaryPath).inserted else { continue }
                report.problems.append(.init(
                    kind: .keySummary, file: summaryPath, sequence: block.header.firstSequence,
                    message: "the key summary disagrees with the block from this sequence on: \(mismatch); a question about"
                        + " a key may miss events (its events are intact; `vt repair` removes the summary, and the next"
                        + " open for changes builds it again)"))
            }
        }
        return nil
    }

    struct BlockProblem: Error { let message: String }

    /// What a block's check found, when its events are intact.
    struct BlockChecked {
        var rawLength: Int
        var erased: Int
        var keyMismatch: KeyMismatch?
    }

    /// How a summary's keys for a block differ from the keys its events carry.
    struct KeyMismatch: CustomStringConvertible {
        /// Keys the events carry that the summary leaves out: questions about them skip the block.
        var missing: [UInt64]
        /// Keys the summary names that no event of the block carries (these cost only time).
        var extra: [UInt64]
        /// Where the entry starts, when not at the block's start: it then covers other events.
        var misplacedAt: UInt64?

        /// nil when both are the same ascending lists and the entry starts with the block.
        init?(_ carried: [UInt64], summarized: [UInt64], entryStart: UInt64, blockStart: UInt64) {
            guard carried != summarized || entryStart != blockStart else { return nil }
            let named = Set(summarized), held = Set(carried)
            missing = carried.filter { !named.contains($0) }
            extra = summarized.filter { !held.contains($0) }
            misplacedAt = entryStart == blockStart ? nil : entryStart
        }

        var description: String {
            var parts: [String] = []
            if let misplacedAt { parts.append("its entry for the block starts at sequence \(misplacedAt)") }
            if !missing.isEmpty { parts.append("it leaves out \(Self.list(missing)), which the block's events carry") }
            if !extra.isEmpty { parts.append("it names \(Self.list(extra)), which none of them carries") }
            return parts.joined(separator: ", and ")
        }

        private static func list(_ keys: [UInt64]) -> String {
            let shown = keys.prefix(3).map { "key " + hex($0) }.joined(separator: ", ")
            return keys.count > 3 ? "\(shown) and \(keys.count - 3) more" : shown
        }

        /// 16 hex digits: how the app's keys, pin ids, are shown everywhere else.
        static func hex(_ key: UInt64) -> String {
            let digits = String(key, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
    }

    /// One result per block, written by the workers.
    private final class ResultSlots: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Result<BlockChecked, BlockProblem>]

        init(count: Int) { slots = Array(repeating: .failure(BlockProblem(message: "not checked")), count: count) }

        func set(_ index: Int, _ result: Result<BlockChecked, BlockProblem>) { lock.withLock { slots[index] = result } }

        func get(_ index: Int) -> Result<BlockChecked, BlockProblem> { lock.withLock { slots[index] } }
    }
}
