import FileIO

/// Opening a format-2 log for writing (FORMAT.md, "Damage and recovery (format 2)" and the
/// recovery column of "Compaction: the swap protocol"): check the files, finish or undo an
/// interrupted compaction, cut a torn tail, and hand the writer its state. Under the lock.
///
/// Cost: every block file's block headers (no payloads), every segment's header, and the
/// active segment's records, whose events are hashed to learn the chain's head (at most one
/// hot-tail segment: 4 MiB by default) — or, after a clean close, only their framing and CRCs,
/// the head coming from the tail checkpoint and checked later in the background.
enum TailRecovery {
    static func openWriter(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> (TailWriter, RecoveryReport) {
        var report = RecoveryReport()
        var files = LogDirectory(directory: directory, fileSystem: fileSystem)
        try files.refresh()
        if files.files.isEmpty {
            guard files.foreign.isEmpty else {
                let names = files.foreign.sorted().prefix(5).joined(separator: ", ")
                throw LogError(
                    .notALog,
                    "\(directory) holds files that are not part of an event log (\(names)); use an empty or new directory",
                    file: directory)
            }
            try Quarantine.removeTemporaries(files.temporaries, directory: directory, fileSystem: fileSystem, report: &report)
            return (try createLog(directory: directory, configuration: configuration, fileSystem: fileSystem), report)
        }

        // Check first, change nothing; then clean up.
        var chain: ChainHash = files.anchor!
        var time = LogFormat.timeBeforeFirstEvent
        var next: UInt64 = 1
        for file in files.files {
            guard case .blocks(let header) = file.kind else { continue }
            let scanner = try BlockFileScanner(path: file.path, header: header, fileSystem: fileSystem)
            // Open checks the headers' chain links alone: reading every payload would make
            // opening cost the whole log's bytes (the payloads' CRCs are `verify`'s).
            try scanner.skipBlocks(expectChain: chain, expectTime: time) { _ in true }
            _ = try scanner.next(expectChain: chain, expectTime: time)  // nil, once the blocks end where the file does
            if let after = scanner.chain, let last = scanner.time {
                chain = after
                time = last
            }
            next = header.lastSequence + 1
        }
        let segments = files.files.filter { $0.kind == .segment }
        var tail: (scanner: TailScanner, damage: (offset: Int64, reason: String, definite: Bool)?)? = nil
        var lastChain = EventChain(head: chain, after: next - 1)
        var check: TailCheck? = nil
        var tailStart: TailPosition? = nil
        let decompressor = ZstdDecompressor()
        defer { tail?.scanner.close() }
        for (position, file) in segments.enumerated() {
            let isLast = position == segments.count - 1
            let scanner = try TailScanner.open(
                path: file.path, fileSystem: fileSystem, mode: isLast ? .readWrite : .readOnly, decompressor: decompressor)
            guard scanner.header.firstSequence == next else {
                scanner.close()
                throw LogError(
                    .corrupt, "the log is damaged: \(file.path) starts at sequence \(scanner.header.firstSequence), but the file before it ends at \(next - 1)",
                    file: file.path, offset: 0, sequence: next)
            }
            guard scanner.header.timeBefore == time, scanner.header.logID == files.logID!, scanner.header.origin == files.origin else {
                scanner.close()
                throw LogError(
                    .corrupt, "the log is damaged: \(file.path)'s header does not continue the file before it (time, log id or origin)",
                    file: file.path, offset: 0, sequence: next)
            }
            // The first segment must continue the chain where the block files end. (The links
            // between later segments need their events hashed: verify checks them.)
            if position == 0, scanner.header.chainBefore != chain {
                scanner.close()
                throw LogError(
                    .corrupt, "the log is damaged: \(file.path)'s chain_before is not the head where the block files end",
                    file: file.path, offset: Int64(LogFormat.segmentChainBeforeOffset), sequence: next)
            }
            if !isLast {
                // A sealed segment: its records must all be valid; its end sets the next start.
                var scanning = true
                while scanning {
                    switch try scanner.next() {
                    case .record: continue
                    case .end: scanning = false
                    case .damaged(let offset, let reason, _):
                        scanner.close()
                        throw LogError.corrupt(reason, file: file.path, offset: offset, sequence: scanner.nextSequence)
                    }
                }
                next = scanner.nextSequence
                time = scanner.time
                scanner.close()
                continue
            }
            // A writer left the head at a point of the segment: when the records up to there
            // still pass their framing and CRCs, they are the bytes it was computed from
            // (checked again in the background), and only the records after it are rehashed. A
            // file system whose calls must come in one order (tests) gets the check at once
            // instead, and a checkpoint that fails it is not used.
            lastChain = EventChain(head: scanner.header.chainBefore, after: scanner.header.firstSequence - 1)
            if files.tailCheckpoints.contains(scanner.header.firstSequence),
                let found = TailCheckpoint.read(for: scanner.header, in: directory, fileSystem: fileSystem),
                let checkpoint = try scanner.skip(to: found)
            {
                let candidate = TailCheck(segment: file.path, checkpoint: checkpoint, fileSystem: fileSystem)
                if fileSystem.allowsReadAhead || candidate.holdsWhenCheckedHere() {
                    lastChain = EventChain(head: checkpoint.chain, after: checkpoint.nextSequence - 1)
                    check = fileSystem.allowsReadAhead ? candidate : nil
                    report.usedTailCheckpoint = true
                    tailStart = checkpoint.start.map(scanner.position(at:))
                } else {
                    scanner.restart()
                }
            }
            let damage = try scanner.rehash(into: &lastChain)
            if let (offset, reason, definite) = damage,
                !(try scanner.isTornTail(at: offset, definite: definite, isLastSegment: true))
            {
                scanner.close()
                throw LogError.corrupt(reason, file: file.path, offset: offset, sequence: scanner.nextSequence)
            }
            next = scanner.nextSequence
            time = scanner.time
            tail = (scanner, damage)
        }

        try Quarantine.removeTemporaries(files.temporaries, directory: directory, fileSystem: fileSystem, report: &report)
        // A checkpoint is for one open: one found wrong in the background must not be used
        // again, and the writer leaves new ones as it goes. (Left behind by a failed removal,
        // it is still right: the bytes before its end of data were synced and never change.)
        for first in files.tailCheckpoints {
            try? fileSystem.removeFile(TailCheckpoint.path(directory, first))
        }
        // A compaction that stopped after its rename: the block file was checked above.
        for first in files.covered {
            for path in [SegmentFiles.segmentPath(directory, first), SegmentFiles.indexPath(directory, first)] {
                if try io("look at \(path)", { try fileSystem.exists(path) }) {
                    try io("remove \(path), which a block file replaced") { try fileSystem.removeFile(path) }
                    report.removedTemporaryFiles.append(Path.name(of: path))
                }
            }
        }
        if !files.covered.isEmpty { try io("sync \(directory)") { try fileSystem.syncDirectory(directory) } }

        let active: ActiveTail
        if let (scanner, damage) = tail {
            if let damage {
                let (bytes, copy) = try Quarantine.cutTornTail(
                    of: scanner.window, path: scanner.path, at: damage.offset, directory: directory, fileSystem: fileSystem)
                report.cutTail = TornTail(
                    segment: scanner.path, offset: damage.offset, bytes: bytes, events: nil,
                    firstLostSequence: scanner.nextSequence, reason: damage.reason, copy: copy)
            }
            active = ActiveTail(
                header: scanner.header, path: scanner.path, file: scanner.window.file, dataEnd: scanner.position,
                allocatedEnd: try io("read the size of \(scanner.path)") { try scanner.window.file.size() })
            tail = nil  // the writer owns the file now
        } else {
            // Only block files: start a segment after them.
            let header = TailSegmentHeader(
                firstSequence: next, logID: files.logID!, createdAt: configuration.clock.now(), timeBefore: time,
                chainBefore: chain, origin: files.origin)
            try TailWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
            active = try ActiveTail.open(
                directory: directory, header: header, dataEnd: Int64(LogFormat.segmentHeaderSize), fileSystem: fileSystem)
        }
        let writer = try TailWriter(
            directory: directory, fileSystem: fileSystem, configuration: configuration, logID: files.logID!,
            origin: files.origin, nextSequence: next, lastTime: time, chain: lastChain, segment: active)
        writer.hadSealedSegmentsAtOpen = segments.count > 1
        writer.pendingCheck = check
        writer.openedAfter = tailStart
        return (writer, report)
    }

    /// A new, empty format-2 log: segment 1 with a fresh random log id.
    static func createLog(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem, origin: LogOrigin = .none
    ) throws -> TailWriter {
        var generator = SystemRandomNumberGenerator()
        let logID = configuration.newLogID
            ?? (0..<LogFiles.logIDSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let anchor = origin.anchor(logID: logID)
        let header = TailSegmentHeader(
            firstSequence: 1, logID: logID, createdAt: configuration.clock.now(),
            timeBefore: LogFormat.timeBeforeFirstEvent, chainBefore: anchor, origin: origin)
        try TailWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let active = try ActiveTail.open(
            directory: directory, header: header, dataEnd: Int64(LogFormat.segmentHeaderSize), fileSystem: fileSystem)
        return try TailWriter(
            directory: directory, fileSystem: fileSystem, configuration: configuration, logID: logID, origin: origin,
            nextSequence: 1, lastTime: LogFormat.timeBeforeFirstEvent, chain: EventChain(head: anchor), segment: active)
    }
}
