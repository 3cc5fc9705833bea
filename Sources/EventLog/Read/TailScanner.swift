import FileIO

/// Walks the records of one hot-tail segment (FORMAT.md, "Hot-tail record", "Damage and recovery").
final class TailScanner {
    enum Step {
        case record(TailRecord, offset: Int64)
        case end(Int64)
        case damaged(offset: Int64, reason: String, definite: Bool)
    }

    let path: String
    let header: TailSegmentHeader
    let window: ReadWindow
    private(set) var position = Int64(LogFormat.segmentHeaderSize)
    private(set) var nextSequence: UInt64
    private(set) var time: Int64
    private let decompressor: ZstdDecompressor
    /// From here to its end the segment was found all zeros (at an earlier end of data).
    private var zerosFrom: Int64?

    init(path: String, header: TailSegmentHeader, window: ReadWindow, decompressor: ZstdDecompressor) {
        self.path = path
        self.header = header
        self.window = window
        self.nextSequence = header.firstSequence
        self.time = header.timeBefore
        self.decompressor = decompressor
    }

    static func open(path: String, fileSystem: any FileSystem, mode: OpenMode = .readOnly, decompressor: ZstdDecompressor) throws -> TailScanner {
        let file = try io("open the segment \(path)") { try fileSystem.openFile(path, mode) }
        let window = ReadWindow(file: file)
        let bytes = Array(try window.available(at: 0, upTo: LogFormat.segmentHeaderSize))
        let header: TailSegmentHeader
        do { header = try LogDirectory.checkedSegmentHeader(bytes, path: path) } catch {
            window.close()
            throw error
        }
        return TailScanner(path: path, header: header, window: window, decompressor: decompressor)
    }

    func close() { window.close() }

    /// Reads the next record. Advances only past valid records.
    func next() throws -> Step {
        let peek = try window.available(at: position, upTo: LogFormat.maxRecordHeadLength + 1)
        guard let first = peek.first else { return .end(position) }
        if first == 0 {
            // A reader following a live log (a replicator, a follower, `vt log --follow`) meets
            // an end again on every poll. The rest of the segment, megabytes of preallocated
            // zeros, is checked once: the writer only appends, so what was zero past an earlier
            // end stays zero past a later one. (Checked on every poll, it cost a replicator more
            // CPU than the app's own commits.) Recovery and verification scan afresh.
            if zerosFrom.map({ position < $0 }) ?? true {
                if let stray = try window.nonZeroOffset(from: position) {
                    return .damaged(offset: position, reason: "non-zero bytes at offset \(stray), after the end of data", definite: false)
                }
                zerosFrom = position
            }
            return .end(position)
        }
        var cursor = ByteCursor(peek)
        guard let head = cursor.readVarint(), cursor.position <= LogFormat.maxRecordHeadLength else {
            return .damaged(offset: position, reason: peek.count <= LogFormat.maxRecordHeadLength ? "an incomplete record head" : "a malformed record head", definite: false)
        }
        let stored = head >> 1
        guard stored >= UInt64(LogFormat.minRecordStoredLength), stored <= UInt64(LogFormat.maxRawLength) else {
            return .damaged(offset: position, reason: "a record head stating \(stored) stored bytes", definite: false)
        }
        let size = cursor.position + Int(stored) + LogFormat.recordCRCSize
        guard let whole = try window.bytes(at: position, count: size) else {
            let present = window.cached(at: position, upTo: size).count
            return .damaged(offset: position, reason: "an incomplete record (\(present) of \(size) bytes)", definite: false)
        }
        switch TailRecord.read(whole, timeBefore: time, decompressor: decompressor) {
        case .end:
            return .end(position)
        case .damaged(let reason, let definite):
            return .damaged(offset: position, reason: reason, definite: definite)
        case .record(let record):
            let offset = position
            position += Int64(record.size)
            nextSequence += UInt64(record.eventCount)
            time = record.lastTime
            return .record(record, offset: offset)
        }
    }

    /// Reads every record from here to the end of data (or to `end`, a record boundary),
    /// appending each event to `chain`: nil there, or where the first record that is not valid
    /// starts, and why.
    func rehash(into chain: inout EventChain, upTo end: Int64 = .max) throws -> (offset: Int64, reason: String, definite: Bool)? {
        while position < end {
            switch try next() {
            case .record(let record, _):
                var events = record.run.makeIterator(firstSequence: chain.sequence + 1)
                while let event = events.next() { chain.append(time: event.timestamp, payload: event.payload) }
            case .end:
                return nil
            case .damaged(let offset, let reason, let definite):
                return (offset, reason, definite)
            }
        }
        return nil
    }

    /// Walks the records up to a tail checkpoint's end of data checking their framing and CRC
    /// alone, neither decompressing nor parsing events (FORMAT.md, "Tail checkpoint"). When they
    /// pass and one ends exactly there, the scanner continues from the checkpoint's values and
    /// the result is the checkpoint, its start left out unless a record ends (or the first one
    /// starts) exactly there too; otherwise the scanner is back at the first record, as just
    /// opened, and the result is nil.
    func skip(to checkpoint: TailCheckpoint) throws -> TailCheckpoint? {
        var startIsBoundary = false
        while true {
            if position == checkpoint.start?.dataEnd { startIsBoundary = true }
            guard position < checkpoint.dataEnd else { break }
            let peek = try window.available(at: position, upTo: LogFormat.maxRecordHeadLength + 1)
            var cursor = ByteCursor(peek)
            guard peek.first.map({ $0 != 0 }) == true, let head = cursor.readVarint(),
                cursor.position <= LogFormat.maxRecordHeadLength, head >> 1 <= UInt64(LogFormat.maxRawLength)
            else { break }
            let size = TailRecord.Frame.size(headLength: cursor.position, storedLength: Int(head >> 1))
            guard let whole = try window.bytes(at: position, count: size), case .framed = TailRecord.frame(whole) else { break }
            position += Int64(size)
        }
        guard position == checkpoint.dataEnd else {
            restart()
            return nil
        }
        nextSequence = checkpoint.nextSequence
        time = checkpoint.lastTime
        var usable = checkpoint
        if !startIsBoundary { usable.start = nil }
        return usable
    }

    /// Continues from `position`, a record boundary an earlier scan of this segment stood at;
    /// false (and nothing changed) when it is not a position in this segment.
    func resume(at position: TailPosition) -> Bool {
        guard position.isIn(path, header) else { return false }
        self.position = position.offset
        nextSequence = position.nextSequence
        time = position.time
        return true
    }

    /// Where the scan stands, with the chain's head there.
    func standing(chain: ChainHash) -> TailPosition {
        position(at: TailCheckpoint.Point(dataEnd: position, nextSequence: nextSequence, lastTime: time, chain: chain))
    }

    /// `point` as a position in this segment.
    func position(at point: TailCheckpoint.Point) -> TailPosition {
        TailPosition(
            path: path, firstSequence: header.firstSequence, chainBefore: header.chainBefore, offset: point.dataEnd,
            nextSequence: point.nextSequence, time: point.lastTime, chain: point.chain)
    }

    /// Back to the segment's first record, as just opened.
    func restart() {
        position = Int64(LogFormat.segmentHeaderSize)
        nextSequence = header.firstSequence
        time = header.timeBefore
    }

    /// Damage means a torn tail only in the active segment and when no valid record starts
    /// anywhere after it (FORMAT.md, "Damage and recovery (format 2)").
    func isTornTail(at offset: Int64, definite: Bool, isLastSegment: Bool) throws -> Bool {
        guard !definite, isLastSegment else { return false }
        return try validRecordOffset(after: offset) == nil
    }

    /// The first position after `offset` where a whole valid record starts, if any. A record
    /// found there must parse with the time it would count from unknown, so times are taken
    /// from the last good event (a later record's deltas are still non-negative).
    func validRecordOffset(after offset: Int64) throws -> Int64? {
        let size = try io("read the size of \(path)") { try window.file.size() }
        guard size > offset + 1 else { return nil }
        let rest = try io("read \(path)") { try window.file.read(count: Int(size - offset - 1), at: offset + 1) }
        return rest.withUnsafeBytes { bytes -> Int64? in
            for start in 0..<bytes.count where bytes[start] != 0 {
                if case .record = TailRecord.read(UnsafeRawBufferPointer(rebasing: bytes[start...]), timeBefore: time, decompressor: decompressor) {
                    return offset + 1 + Int64(start)
                }
            }
            return nil
        }
    }
}
