/// ``LogCursor``'s engine for a format-1 log: segment by segment, batch by batch, each checked
/// as it is read (CRCs, sequence, and the hash chain from the second batch read on), the sparse
/// index used to find where to start (FORMAT.md, part "Format 1").
final class LegacyCursor: CursorEngine {
    private let reader: LegacyReading
    private let start: LogCursor.Start
    private let lastSequence: UInt64?
    private let lastTime: LogTimestamp?
    private let decompressor = ZstdDecompressor()

    private var positioned = false
    private var segmentPosition = 0
    private var segment: SegmentHandle?
    private var scanner: SegmentScanner?
    private var batch: DecodedBatch.Iterator?
    /// After reaching a segment's end and seeing a newer segment appear, the end is read once
    /// more before moving on (the writer may have appended just before it rolled).
    private var confirmingEnd = false
    private var isFinished = false
    private(set) var incompleteTail: (file: String, offset: Int64, reason: String)?

    init(reading reader: LegacyReading, start: LogCursor.Start, lastSequence: UInt64?, lastTime: LogTimestamp?) {
        self.reader = reader
        self.start = start
        self.lastSequence = lastSequence
        self.lastTime = lastTime
    }

    deinit { close() }

    func close() {
        segment?.close()
        segment = nil
        scanner = nil
    }

    /// The next event, or nil at the current end of the log (or past the cursor's bounds).
    func next() throws -> LogEvent? {
        while !isFinished {
            if batch != nil, let event = batch!.next() {
                if let lastSequence, event.sequence > lastSequence { return finish() }
                if let lastTime, event.timestamp > lastTime { return finish() }
                if case .time(let since) = start, event.timestamp < since { continue }
                return event
            }
            batch = nil
            if !positioned {
                guard try position() else { return nil }
            }
            guard let scanner else { return nil }
            switch try scanner.next() {
            case .batch(let found):
                incompleteTail = nil
                confirmingEnd = false
                if skippable(found.header) { continue }
                switch DecodedBatch.decode(found.header, stored: found.stored, decompressor: decompressor) {
                case .success(let decoded):
                    var iterator = decoded.makeIterator()
                    if case .sequence(let first) = start { iterator.skip(to: first) }
                    batch = iterator
                case .failure(let reason):
                    throw LogError.corrupt(
                        reason.description, file: scanner.path, offset: found.offset,
                        sequence: found.header.firstSequence)
                }
            case .end(let offset):
                guard try moveToNextSegment(endingAt: offset) else { return nil }
            case .damaged(let damage):
                var isLast = segmentPosition + 1 >= reader.segments.count
                if isLast {
                    try reader.refresh()
                    isLast = segmentPosition + 1 >= reader.segments.count
                }
                switch try scanner.classify(damage, isLastSegment: isLast) {
                case .inProgress:
                    continue
                case .tornTail:
                    incompleteTail = (scanner.path, damage.offset, damage.reason)
                    scanner.window.invalidate()
                    return nil
                case .corruption:
                    throw LogError.corrupt(
                        damage.reason, file: scanner.path, offset: damage.offset, sequence: scanner.expectedSequence)
                }
            }
        }
        return nil
    }

    /// Positions on the batch holding `sequence` without decoding it, and returns its last
    /// sequence and hash. For ``LogReader/head(at:)``.
    func batchHolding(_ sequence: UInt64) throws -> (lastSequence: UInt64, hash: ChainHash)? {
        if !positioned {
            guard try position() else { return nil }
        }
        while let scanner {
            switch try scanner.next() {
            case .batch(let found):
                if found.header.lastSequence >= sequence {
                    return found.header.firstSequence <= sequence ? (found.header.lastSequence, found.hash) : nil
                }
            case .end(let offset):
                guard try moveToNextSegment(endingAt: offset) else { return nil }
            case .damaged(let damage):
                let isLast = segmentPosition + 1 >= reader.segments.count
                switch try scanner.classify(damage, isLastSegment: isLast) {
                case .inProgress: continue
                case .tornTail: return nil
                case .corruption:
                    throw LogError.corrupt(
                        damage.reason, file: scanner.path, offset: damage.offset, sequence: scanner.expectedSequence)
                }
            }
        }
        return nil
    }

    private func finish() -> LogEvent? {
        isFinished = true
        batch = nil
        return nil
    }

    /// A batch entirely before the start needs no decompression.
    private func skippable(_ header: BatchHeader) -> Bool {
        switch start {
        case .sequence(let first): header.lastSequence < first
        case .time(let since): header.lastTimestamp < since
        }
    }

    /// Finds the segment and offset to start from, using the sparse index. False when the log
    /// has no segments yet.
    private func position() throws -> Bool {
        if reader.segments.isEmpty { try reader.refresh() }
        let found: Int?
        switch start {
        case .sequence(let sequence): found = reader.segmentPosition(holding: sequence)
        case .time(let time): found = try reader.segmentPosition(startingBefore: time)
        }
        guard let found else { return false }
        let segment = try reader.openSegment(reader.segments[found])
        let entries = SegmentHandle.loadIndex(
            directory: reader.directory, firstSequence: segment.firstSequence, fileSystem: reader.fileSystem)?.entries ?? []
        let entry: IndexEntry? = switch start {
        case .sequence(let sequence): IndexFile.entry(atOrBefore: sequence, in: entries)
        case .time(let time): IndexFile.entry(before: time, in: entries)
        }
        var chosen: SegmentScanner? = nil
        if let entry, entry.offset > Int64(LegacyFormat.segmentHeaderSize) {
            let probe = SegmentScanner(
                path: segment.path, window: segment.window, position: entry.offset, expectedSequence: entry.sequence,
                previousHash: nil)
            // The segment is the truth: use the entry only if a valid batch is where it says.
            if case .batch = try probe.next() {
                chosen = SegmentScanner(
                    path: segment.path, window: segment.window, position: entry.offset,
                    expectedSequence: entry.sequence, previousHash: nil)
            }
        }
        self.segment = segment
        self.segmentPosition = found
        self.scanner = chosen ?? segment.scannerFromStart(previousHash: found == 0 ? reader.genesis : nil)
        positioned = true
        return true
    }

    /// At a segment's end: move into the next segment, checking that it continues the sequence
    /// and the chain. False when this is the end of the log for now.
    private func moveToNextSegment(endingAt offset: Int64) throws -> Bool {
        guard let scanner else { return false }
        if segmentPosition + 1 >= reader.segments.count {
            try reader.refresh()
            scanner.window.invalidate()
            if segmentPosition + 1 >= reader.segments.count { return false }
            // A newer segment appeared: read this end once more before leaving it.
            if !confirmingEnd {
                confirmingEnd = true
                return true
            }
        }
        confirmingEnd = false
        let nextFirst = reader.segments[segmentPosition + 1]
        guard nextFirst == scanner.expectedSequence else {
            throw LogError(
                .corrupt,
                "the log is damaged: \(SegmentFiles.name(nextFirst, LogFiles.segmentExtension)) starts at sequence"
                    + " \(nextFirst), but \(scanner.path) ends at \(scanner.expectedSequence - 1)",
                file: scanner.path, offset: offset, sequence: scanner.expectedSequence)
        }
        let next = try reader.openSegment(nextFirst)
        segment?.close()
        segment = next
        segmentPosition += 1
        self.scanner = next.scannerFromStart(previousHash: scanner.previousHash)
        return true
    }
}
