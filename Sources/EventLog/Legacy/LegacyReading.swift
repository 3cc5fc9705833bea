import FileIO

/// Format 1's reading (``FormatReading``): segments of batches, each with its sparse index, a
/// chain over batches from the first segment's header (FORMAT.md, part "Format 1").
final class LegacyReading: FormatReading {
    let directory: String
    let fileSystem: any FileSystem
    /// First sequences of the known segments, ascending.
    private(set) var segments: [UInt64] = []
    private(set) var logID: [UInt8]?
    /// The hash the first batch of the log must name.
    private(set) var genesis: ChainHash?
    private var firstTimestamps: [UInt64: LogTimestamp] = [:]

    init(directory: String, fileSystem: any FileSystem) {
        self.directory = directory
        self.fileSystem = fileSystem
    }

    func refresh() throws {
        let listing = try SegmentFiles.list(directory, fileSystem)
        if let first = listing.segments.first, first != 1 {
            throw LogError(
                .corrupt,
                "the log is damaged: its first segment starts at sequence \(first), so the segments before it are"
                    + " missing from \(directory)",
                file: directory, sequence: 1)
        }
        segments = listing.segments
        if logID == nil, !segments.isEmpty {
            let first = try SegmentHandle.open(directory: directory, firstSequence: 1, fileSystem: fileSystem, logID: nil)
            defer { first.close() }
            logID = first.header.logID
            genesis = ChainHash.of(first.headerBytes)
        }
    }

    func cursor(start: LogCursor.Start, lastSequence: UInt64?, lastTime: LogTimestamp?, tailPosition: TailPosition?) -> any CursorEngine {
        LegacyCursor(reading: self, start: start, lastSequence: lastSequence, lastTime: lastTime)
    }

    /// The hash of the batch whose last event is `sequence` (nil when no batch ends exactly there).
    func head(at sequence: UInt64) throws -> LogHead? {
        if segments.isEmpty { try refresh() }
        guard let genesis else { return nil }
        if sequence == 0 { return LogHead(sequence: 0, hash: genesis) }
        let cursor = LegacyCursor(reading: self, start: .sequence(sequence), lastSequence: sequence, lastTime: nil)
        defer { cursor.close() }
        guard let batch = try cursor.batchHolding(sequence), batch.lastSequence == sequence else { return nil }
        return LogHead(sequence: sequence, hash: batch.hash)
    }

    /// Read when `value()` is called: a batch's hash is found by reading up to it.
    func headInBackground(at sequence: UInt64) -> PendingHead {
        PendingHead(givesPositions: false) { try self.head(at: sequence).map { ($0, nil) } }
    }

    func lastSequence() throws -> UInt64 {
        guard let first = segments.last else { return 0 }
        let segment = try openSegment(first)
        defer { segment.close() }
        let index = SegmentHandle.loadIndex(directory: directory, firstSequence: first, fileSystem: fileSystem)
        while true {
            let tail = try SegmentTail.scan(segment, index: index, startHash: nil, indexInterval: .max)
            if let damage = tail.damage {
                switch try tail.scanner.classify(damage, isLastSegment: true) {
                case .inProgress: continue  // an append landed while the tail was read
                case .corruption:
                    throw LogError.corrupt(
                        damage.reason, file: segment.path, offset: damage.offset, sequence: tail.scanner.expectedSequence)
                case .tornTail: break
                }
            }
            return tail.lastBatch?.lastSequence ?? first - 1
        }
    }

    /// Format 1 has no key summaries: the whole range.
    func ranges(mayHoldKeysIn keys: ClosedRange<UInt64>, function: String, from: UInt64, through: UInt64) throws -> [ClosedRange<UInt64>] {
        [from...through]
    }

    func verify(keys: BlockKeys?, report: inout VerificationReport, progress: ((Int64, Int64) -> Void)?) throws {
        try LegacyVerifier.walk(self, report: &report, progress: progress, stopAtFirstDamage: false)
    }

    func planRepair(keys: BlockKeys?) throws -> RepairPlan {
        try LegacyRepair.plan(self, keys: keys)
    }

    /// A format-1 log has a chain over batches, not events: no identity a format-2 log could share.
    func identity() throws -> LogIdentity? {
        throw LogError(
            .invalidArgument,
            "\(directory) is a format-1 log, whose chain links batches rather than events; `vt upgrade` converts it")
    }

    func openSegment(_ firstSequence: UInt64) throws -> SegmentHandle {
        try SegmentHandle.open(directory: directory, firstSequence: firstSequence, fileSystem: fileSystem, logID: logID)
    }

    /// The position in ``segments`` of the segment holding `sequence` (the last one starting at
    /// or before it).
    func segmentPosition(holding sequence: UInt64) -> Int? {
        segments.lastIndex(where: { $0 <= sequence })
    }

    /// The position of the segment where events at or after `time` begin: the last segment
    /// whose first event is strictly earlier than `time` (timestamps never decrease).
    func segmentPosition(startingBefore time: LogTimestamp) throws -> Int? {
        guard !segments.isEmpty else { return nil }
        var low = 0
        var high = segments.count
        while low < high {
            let middle = (low + high) / 2
            if let first = try firstTimestamp(of: segments[middle]), first < time { low = middle + 1 } else { high = middle }
        }
        return max(0, low - 1)
    }

    /// The timestamp of a segment's first event (read once, then cached: it never changes).
    private func firstTimestamp(of firstSequence: UInt64) throws -> LogTimestamp? {
        if let known = firstTimestamps[firstSequence] { return known }
        let segment = try openSegment(firstSequence)
        defer { segment.close() }
        guard let head = try segment.window.bytes(at: Int64(LegacyFormat.segmentHeaderSize), count: LegacyFormat.batchHeaderSize),
            case .success(let header) = BatchHeader.decode(head)
        else { return nil }
        firstTimestamps[firstSequence] = header.firstTimestamp
        return header.firstTimestamp
    }
}
