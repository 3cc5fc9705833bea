import FileIO

/// What one compaction did.
public struct CompactionReport: Sendable, Hashable, CustomStringConvertible {
    /// The block file written, nil when there was nothing sealed to compact.
    public var blockFile: String?
    public var segments = 0
    public var blocks = 0
    public var events: UInt64 = 0
    /// Bytes of the segments replaced, and of the block file that replaced them.
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0
    /// Key summaries built for block files that lacked one (``EventLog/compact()`` only;
    /// FORMAT.md, "Key summaries").
    public var keySummariesBuilt = 0

    public init() {}

    public var description: String {
        let summaries = keySummariesBuilt == 0 ? "" : "built \(keySummariesBuilt) missing key summar\(keySummariesBuilt == 1 ? "y" : "ies")"
        guard let blockFile else { return summaries.isEmpty ? "nothing to compact" : "nothing to compact; " + summaries }
        return "compacted \(segments) segment\(segments == 1 ? "" : "s") (\(events) events, \(bytesBefore) bytes) into"
            + " \(blocks) block\(blocks == 1 ? "" : "s") in \(Path.name(of: blockFile)) (\(bytesAfter) bytes)"
            + (summaries.isEmpty ? "" : "; " + summaries)
    }
}

/// Compaction: sealed hot-tail segments become one block file (FORMAT.md, "Compaction: the swap
/// protocol"). Runs under the writer's lock, beside the writer: it reads only sealed segments
/// and creates only new names, so appends never wait for it.
///
/// Memory: one block's events and their compressed form. Cost: every event read, encoded,
/// decoded again and hashed once: the chain is derived from the blocks as written and checked
/// against every chain head the old segments state (each one's `chain_before`, and the next
/// file's), before anything is swapped in.
enum Compaction {
    /// About 8 ms of compaction (1.9 µs an event) between two questions to `isCancelled`.
    static let eventsBetweenCancellationChecks = 4_096

    /// Compacts every segment that starts before `activeFirst` (the active segment's first
    /// sequence), or does nothing when there is none.
    /// `isCancelled` is asked before each segment and every few thousand events; when it says
    /// yes, the compaction stops before its swap, removes its temporary file and throws
    /// ``CompactionCancelled``: the segments stay the log, to be compacted another time.
    static func compact(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem, before activeFirst: UInt64,
        isCancelled: () -> Bool = { false }
    ) throws -> CompactionReport {
        var report = CompactionReport()
        var files = LogDirectory(directory: directory, fileSystem: fileSystem)
        try files.refresh()
        let sealed = files.files.filter { $0.kind == .segment && $0.firstSequence < activeFirst }
        guard let first = sealed.first, let logID = files.logID else { return report }
        guard let nextFile = files.files.first(where: { $0.firstSequence > sealed.last!.firstSequence }) else {
            return report  // the active segment is not there: nothing is sealed after all
        }
        let decompressor = ZstdDecompressor()

        // Where the chain and the time stand before the first sealed segment.
        let firstScanner = try TailScanner.open(path: first.path, fileSystem: fileSystem, decompressor: decompressor)
        let chainBefore = firstScanner.header.chainBefore
        let timeBefore = firstScanner.header.timeBefore
        firstScanner.close()
        if let previous = files.files.last(where: { $0.firstSequence < first.firstSequence }), case .blocks(let header) = previous.kind {
            let scanner = try BlockFileScanner(path: previous.path, header: header, fileSystem: fileSystem)
            try scanner.skipBlocks(expectChain: nil, expectTime: nil) { _ in true }
            _ = try scanner.next(expectChain: nil, expectTime: nil)  // nil, once the blocks end where the file does
            guard scanner.chain == chainBefore, scanner.time == timeBefore else {
                throw LogError(
                    .corrupt, "the log is damaged: \(first.path) does not continue the chain where \(previous.path) ends",
                    file: first.path, offset: Int64(LogFormat.segmentChainBeforeOffset), sequence: first.firstSequence)
            }
        }

        var writer = try BlockFileWriter(
            directory: directory, firstSequence: first.firstSequence, timeBefore: timeBefore, chainBefore: chainBefore,
            configuration: configuration, fileSystem: fileSystem, chainFromBlocks: true)
        var sinceAsked = 0
        do {
            for segment in sealed {
                if isCancelled() { throw CompactionCancelled() }
                sinceAsked = 0
                let scanner = try TailScanner.open(path: segment.path, fileSystem: fileSystem, decompressor: decompressor)
                defer { scanner.close() }
                let doesNotContinue = LogError(
                    .corrupt, "the log is damaged: \(segment.path)'s header does not continue the segment before it",
                    file: segment.path, offset: 0, sequence: segment.firstSequence)
                guard scanner.header.timeBefore == writer.lastTime, scanner.header.firstSequence == writer.nextSequence else {
                    throw doesNotContinue
                }
                try writer.expect(scanner.header.chainBefore, after: writer.nextSequence - 1, else: doesNotContinue)
                report.bytesBefore += try io("read the size of \(segment.path)") { try scanner.window.file.size() }
                reading: while true {
                    switch try scanner.next() {
                    case .record(let record, _):
                        var events = record.run.makeIterator(firstSequence: scanner.nextSequence - UInt64(record.eventCount))
                        while let event = events.next() {
                            try writer.add(event.payload, at: event.timestamp.microsecondsSinceEpoch)
                        }
                        sinceAsked += record.eventCount
                        if sinceAsked >= Self.eventsBetweenCancellationChecks {
                            sinceAsked = 0
                            if isCancelled() { throw CompactionCancelled() }
                        }
                    case .end:
                        break reading
                    case .damaged(let offset, let reason, _):
                        throw LogError.corrupt(reason, file: segment.path, offset: offset, sequence: scanner.nextSequence)
                    }
                }
                report.segments += 1
            }
            // The next file must start where the compacted ones end, with the same chain.
            if nextFile.kind == .segment {
                let next = try LogDirectory.readSegmentHeader(nextFile.path, fileSystem: fileSystem)
                let doesNotContinue = LogError(
                    .corrupt, "the log is damaged: \(nextFile.path) does not continue the chain where the sealed segments end",
                    file: nextFile.path, offset: 0, sequence: writer.nextSequence)
                guard next.firstSequence == writer.nextSequence, next.timeBefore == writer.lastTime else { throw doesNotContinue }
                try writer.expect(next.chainBefore, after: writer.nextSequence - 1, else: doesNotContinue)
            }
            // Steps 3 and 4: written, synced, read back and rehashed.
            let header = try writer.finish(logID: logID, origin: files.origin, createdAt: configuration.clock.now())
            report.blocks = writer.blockCount
            report.events = header.eventCount
            report.bytesAfter = writer.bytesWritten
        } catch {
            writer.abandon()
            throw error
        }
        // Step 5, the commit point; step 6, the clean-up.
        try writer.commit()
        for segment in sealed {
            try io("remove \(segment.path)") { try fileSystem.removeFile(segment.path) }
            let index = SegmentFiles.indexPath(directory, segment.firstSequence)
            if try io("look at \(index)", { try fileSystem.exists(index) }) {
                try io("remove \(index)") { try fileSystem.removeFile(index) }
            }
        }
        try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
        report.blockFile = writer.finalPath
        return report
    }
}

/// A compaction stopped because its log is closing; nothing was changed.
struct CompactionCancelled: Error {}
