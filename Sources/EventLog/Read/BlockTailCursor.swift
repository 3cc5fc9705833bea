import FileIO

/// ``LogCursor``'s engine for a format-2 log: block files block by block, then hot-tail
/// segments record by record, each checked as it is read (CRCs, sequence, times, and the
/// chain links between blocks; rehashing every event is `verify`'s job). Memory: one decoded
/// block or record and one read window.
final class BlockTailCursor: CursorEngine {
    private var files: LogDirectory
    private let start: LogCursor.Start
    private let lastSequence: UInt64?
    private let lastTime: LogTimestamp?
    private let decompressor = ZstdDecompressor()
    private let payloadCodec: (any BlockPayloadCodec)?

    /// The next sequence number to hand out (or to scan past, when starting by time).
    private var expected: UInt64
    private var current: Open?
    private var run: EventRun.Iterator?
    /// What the next file must start from, when the cursor came to it by reading on.
    private var chainAtEnd: ChainHash?
    private var timeAtEnd: Int64?
    private var confirmingEnd = false
    private var isFinished = false
    private var positioned = false
    private(set) var incompleteTail: (file: String, offset: Int64, reason: String)?

    private enum Open {
        case blocks(BlockReadAhead)
        case tail(TailScanner)
    }

    /// The reader's headers of blocks walked before, for seeks.
    private let headers: BlockHeaderCache?

    /// Where the cursor may start reading the segment that holds its first event, instead of at
    /// its first record (``TailPosition``); used once.
    private var tailPosition: TailPosition?

    init(
        directory: String, fileSystem: any FileSystem, start: LogCursor.Start, lastSequence: UInt64?, lastTime: LogTimestamp?,
        payloadCodec: (any BlockPayloadCodec)?, headers: BlockHeaderCache? = nil, tailPosition: TailPosition? = nil
    ) {
        self.payloadCodec = payloadCodec
        self.headers = headers
        self.tailPosition = tailPosition
        self.files = LogDirectory(directory: directory, fileSystem: fileSystem, headers: headers)
        self.start = start
        self.lastSequence = lastSequence
        self.lastTime = lastTime
        if case .sequence(let first) = start { expected = first } else { expected = 1 }
    }

    deinit { close() }

    func close() {
        switch current {
        case .tail(let scanner): scanner.close()
        case .blocks(let reader): reader.finish()
        case nil: break
        }
        current = nil
    }

    func next() throws -> LogEvent? {
        while !isFinished {
            if run != nil, let event = run!.next() {
                if event.sequence < expected { continue }
                if let lastSequence, event.sequence > lastSequence { return finish() }
                if let lastTime, event.timestamp > lastTime { return finish() }
                expected = event.sequence + 1
                if case .time(let since) = start, event.timestamp < since { continue }
                return event
            }
            run = nil
            if current == nil {
                if !positioned { try positionByTime() }
                guard try openFile(holding: expected) else { return nil }
            }
            switch current! {
            case .blocks(let reader):
                if let block = try reader.next(expectChain: chainAtEnd, expectTime: timeAtEnd) {
                    chainAtEnd = nil
                    timeAtEnd = nil
                    if block.header.lastSequence < expected { continue }
                    if case .time(let since) = start, block.header.lastTime < since.microsecondsSinceEpoch {
                        expected = block.header.lastSequence + 1
                        continue
                    }
                    switch block.decoded {
                    case .success(let decoded): run = decoded.run.makeIterator(firstSequence: block.header.firstSequence)
                    case .failure(let reason):
                        throw LogError.corrupt(reason.description, file: reader.path, offset: block.offset, sequence: block.header.firstSequence)
                    }
                } else {
                    chainAtEnd = reader.chain
                    timeAtEnd = reader.time
                    expected = max(expected, reader.nextSequence)
                    current = nil
                }
            case .tail(let scanner):
                switch try scanner.next() {
                case .record(let record, _):
                    incompleteTail = nil
                    confirmingEnd = false
                    let first = scanner.nextSequence - UInt64(record.eventCount)
                    if scanner.nextSequence <= expected { continue }
                    run = record.run.makeIterator(firstSequence: first)
                case .end:
                    guard try moveOn(from: scanner) else { return nil }
                case .damaged(let offset, let reason, let definite):
                    try files.refresh()
                    let isLast = files.files.last?.firstSequence == scanner.header.firstSequence
                    if try scanner.isTornTail(at: offset, definite: definite, isLastSegment: isLast) {
                        incompleteTail = (scanner.path, offset, reason)
                        scanner.window.invalidate()
                        return nil
                    }
                    // A valid record further on: the bytes here may have been caught half-written
                    // by a reader beside the writer. Read them once more before judging.
                    scanner.window.invalidate()
                    if !definite, case .record(let record, _) = try scanner.next() {
                        if scanner.nextSequence > expected {
                            run = record.run.makeIterator(firstSequence: scanner.nextSequence - UInt64(record.eventCount))
                        }
                        continue
                    }
                    throw LogError.corrupt(reason, file: scanner.path, offset: offset, sequence: scanner.nextSequence)
                }
            }
        }
        return nil
    }

    private func finish() -> LogEvent? {
        isFinished = true
        run = nil
        if case .blocks(let reader) = current { reader.finish() }
        return nil
    }

    /// At a segment's end: on to the next file when one exists (reading this end once more
    /// first, as the writer may have appended just before it rolled), else the end for now.
    private func moveOn(from scanner: TailScanner) throws -> Bool {
        try files.refresh()
        scanner.window.invalidate()
        // Another file holds what comes next: a segment that starts where this one ends, or a
        // block file that a compaction made of this segment and others (an empty segment is
        // never followed by one).
        guard scanner.nextSequence > scanner.header.firstSequence,
            let position = files.position(holding: scanner.nextSequence)
        else { return false }
        switch files.files[position].kind {
        case .segment:
            guard files.files[position].firstSequence == scanner.nextSequence else { return false }
        case .blocks(let header):
            guard header.lastSequence >= scanner.nextSequence else { return false }
        }
        if !confirmingEnd {
            confirmingEnd = true
            return true
        }
        confirmingEnd = false
        timeAtEnd = scanner.time
        chainAtEnd = nil
        expected = max(expected, scanner.nextSequence)
        scanner.close()
        current = nil
        return true
    }

    /// Opens the file holding `sequence`. False when the log does not reach it (yet).
    private func openFile(holding sequence: UInt64) throws -> Bool {
        for attempt in 0..<3 {
            if attempt > 0 || files.files.isEmpty { try files.refresh() }
            guard let position = files.position(holding: sequence) else { return false }
            let file = files.files[position]
            // What the file must start from is known only when it starts right where the cursor
            // stands (it came to it by reading on), or at sequence 1.
            if position == 0 {
                chainAtEnd = files.anchor
                timeAtEnd = LogFormat.timeBeforeFirstEvent
            } else if file.firstSequence != sequence {
                chainAtEnd = nil
                timeAtEnd = nil
            }
            do {
                switch file.kind {
                case .blocks(let header):
                    guard header.lastSequence >= sequence else {
                        if position == files.files.count - 1 { return false }
                        continue
                    }
                    let scanner = try BlockFileScanner(path: file.path, header: header, fileSystem: files.fileSystem)
                    var since: Int64? = nil
                    if case .time(let time) = start { since = time.microsecondsSinceEpoch }
                    try scanner.skipBlocks(expectChain: chainAtEnd, expectTime: timeAtEnd, cache: headers) { block in
                        block.lastSequence < sequence || since.map { block.lastTime < $0 } ?? false
                    }
                    expected = max(expected, scanner.nextSequence)
                    current = .blocks(BlockReadAhead(
                        scanner: scanner, decompressor: decompressor, payloadCodec: payloadCodec, lastWanted: lastSequence,
                        readsAhead: files.fileSystem.allowsReadAhead, headers: headers))
                case .segment:
                    let scanner = try TailScanner.open(path: file.path, fileSystem: files.fileSystem, decompressor: decompressor)
                    if let time = timeAtEnd, scanner.header.timeBefore != time {
                        let path = file.path
                        scanner.close()
                        throw LogError(
                            .corrupt, "the log is damaged: \(path)'s time_before is not the time of the event before it",
                            file: path, offset: Int64(LogFormat.segmentTimeBeforeOffset), sequence: file.firstSequence)
                    }
                    if let chain = chainAtEnd, scanner.header.chainBefore != chain {
                        let path = file.path
                        scanner.close()
                        throw LogError(
                            .corrupt, "the log is damaged: \(path)'s chain_before is not the head where the file before it ends",
                            file: path, offset: Int64(LogFormat.segmentChainBeforeOffset), sequence: file.firstSequence)
                    }
                    chainAtEnd = nil
                    timeAtEnd = nil
                    if let position = tailPosition, position.nextSequence <= sequence { _ = scanner.resume(at: position) }
                    tailPosition = nil
                    current = .tail(scanner)
                }
                return true
            } catch let error as LogError where error.code == .io && attempt < 2 {
                // A compaction removed the segment between the listing and the open: list again.
                continue
            }
        }
        return false
    }

    /// For a cursor that starts at a time: begin in the last file whose events before it are
    /// all earlier than that time (its `time_before` is).
    private func positionByTime() throws {
        positioned = true
        guard case .time(let since) = start else { return }
        try files.refresh()
        var chosen = files.files.first?.firstSequence ?? 1
        for file in files.files.reversed() {
            let before: Int64
            switch file.kind {
            case .blocks(let header):
                let scanner = try BlockFileScanner(path: file.path, header: header, fileSystem: files.fileSystem)
                guard let first = try scanner.next(expectChain: nil, expectTime: nil) else { continue }
                before = first.header.timeBefore
            case .segment:
                before = try LogDirectory.readSegmentHeader(file.path, fileSystem: files.fileSystem).timeBefore
            }
            if before < since.microsecondsSinceEpoch {
                chosen = file.firstSequence
                break
            }
        }
        expected = chosen
    }
}
