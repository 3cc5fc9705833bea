import FileIO

/// An open segment whose header was checked against its name and its log.
struct SegmentHandle {
    let firstSequence: UInt64
    let path: String
    let header: SegmentHeader
    /// The 64 header bytes as on disk (segment 1's are the chain's anchor).
    let headerBytes: [UInt8]
    let window: ReadWindow

    /// Opens and checks a segment. `logID` is the first segment's id, when already known.
    static func open(
        directory: String, firstSequence: UInt64, fileSystem: any FileSystem, mode: OpenMode = .readOnly,
        logID: [UInt8]?, chunkSize: Int = 1 << 20
    ) throws -> SegmentHandle {
        let path = SegmentFiles.segmentPath(directory, firstSequence)
        let file = try io("open the segment \(path)") { try fileSystem.openFile(path, mode) }
        let window = ReadWindow(file: file, chunkSize: chunkSize)
        let headerBytes = Array(try window.available(at: 0, upTo: LegacyFormat.segmentHeaderSize))
        let header = try SegmentHeader.decode(headerBytes, file: path)
        guard header.firstSequence == firstSequence else {
            throw LogError(
                .corrupt,
                "the log is damaged: \(path) says it starts at sequence \(header.firstSequence), but its name says \(firstSequence)",
                file: path, offset: Int64(LogFiles.segmentFirstSequenceOffset), sequence: firstSequence)
        }
        if let logID, header.logID != logID {
            throw LogError(
                .corrupt,
                "the log is damaged: \(path) belongs to another log (log id \(hex(header.logID)), not \(hex(logID)))",
                file: path, offset: Int64(LegacyFormat.segmentLogIDOffset), sequence: firstSequence)
        }
        return SegmentHandle(
            firstSequence: firstSequence, path: path, header: header, headerBytes: headerBytes, window: window)
    }

    /// A scanner from the first batch.
    func scannerFromStart(previousHash: ChainHash?) -> SegmentScanner {
        SegmentScanner(
            path: path, window: window, position: Int64(LegacyFormat.segmentHeaderSize),
            expectedSequence: firstSequence, previousHash: previousHash)
    }

    /// The segment's sparse index as far as it can be trusted, or nil when there is no file.
    static func loadIndex(directory: String, firstSequence: UInt64, fileSystem: any FileSystem) -> IndexFile.Contents? {
        let path = SegmentFiles.indexPath(directory, firstSequence)
        guard let file = try? fileSystem.openFile(path, .readOnly) else { return nil }
        defer { try? file.close() }
        guard let bytes = try? file.readAll() else { return nil }
        return IndexFile.decode(bytes, firstSequence: firstSequence)
    }

    func close() { window.close() }
}

/// Where a segment's data ends, found by scanning from its last trustworthy index entry.
struct SegmentTail {
    /// Index entries confirmed by the data, plus entries for the batches scanned after them.
    var entries: [IndexEntry]
    /// True when the index file must be rewritten: missing, damaged, stale or incomplete.
    var indexNeedsRewrite: Bool
    /// True when the scan began at the segment's first batch (so its chain link was checked).
    var scannedFromStart: Bool
    /// The last valid batch, if the segment has any.
    var lastBatch: BatchHeader?
    /// Its hash (what the next batch must name).
    var lastHash: ChainHash?
    /// The offset just after the last valid batch.
    var end: Int64
    /// What stopped the scan when it was not a clean end of data.
    var damage: Damage?
    /// The scanner, positioned at ``end``, for classifying ``damage``.
    var scanner: SegmentScanner

    /// Scans `segment` to its end. `startHash` is what its first batch must name, when known.
    static func scan(
        _ segment: SegmentHandle, index: IndexFile.Contents?, startHash: ChainHash?, indexInterval: Int
    ) throws -> SegmentTail {
        var entries = index?.entries ?? []
        var rewrite = index == nil || index!.damaged
        // Start at the last entry that points at a valid batch with its sequence; entries past
        // the data (left by a crash) are dropped.
        var scanner: SegmentScanner? = nil
        while let last = entries.last {
            let candidate = SegmentScanner(
                path: segment.path, window: segment.window, position: last.offset,
                expectedSequence: last.sequence, previousHash: nil)
            if case .batch(let batch) = try candidate.next(), batch.header.firstTimestamp == last.timestamp {
                scanner = SegmentScanner(
                    path: segment.path, window: segment.window, position: last.offset,
                    expectedSequence: last.sequence, previousHash: nil)
                break
            }
            entries.removeLast()
            rewrite = true
        }
        let fromStart = scanner == nil
        let active = scanner ?? segment.scannerFromStart(previousHash: startHash)
        var tail = SegmentTail(
            entries: entries, indexNeedsRewrite: rewrite, scannedFromStart: fromStart, lastBatch: nil,
            lastHash: fromStart ? startHash : nil, end: active.position, damage: nil, scanner: active)
        scanLoop: while true {
            switch try active.next() {
            case .batch(let batch):
                let due = tail.entries.last.map { batch.offset - $0.offset >= Int64(indexInterval) } ?? true
                if due, tail.entries.last?.offset != batch.offset {
                    tail.entries.append(IndexEntry(
                        sequence: batch.header.firstSequence, timestamp: batch.header.firstTimestamp,
                        offset: batch.offset))
                    tail.indexNeedsRewrite = true
                }
                tail.lastBatch = batch.header
                tail.lastHash = batch.hash
                tail.end = active.position
            case .end(let offset):
                tail.end = offset
                if let stray = try active.window.nonZeroOffset(from: offset) {
                    tail.damage = Damage(
                        offset: offset, reason: "non-zero bytes at offset \(stray), after the end of data",
                        header: nil, definite: false)
                }
                break scanLoop
            case .damaged(let damage):
                tail.end = damage.offset
                tail.damage = damage
                break scanLoop
            }
        }
        return tail
    }
}
