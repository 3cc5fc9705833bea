import Dispatch
import FileIO

/// Reads a log: sequentially from a sequence number or a time, by random access, or following
/// a writer as it appends. Takes no lock, so it can run beside the writer (in this process or
/// another) and always sees a prefix of the log.
///
/// ```swift
/// let reader = try LogReader(directory: path)
/// let cursor = try reader.events(from: 100, through: 200)
/// while let event = try cursor.next() { … }
/// let one = try reader.event(at: 42)
/// for try await event in reader.follow(from: reader.lastSequence() + 1) { … }
/// ```
///
/// Every batch is checked as it is read (checksums, sequence, and the hash chain from the
/// second batch read onwards); damage throws ``LogError/Code/corrupt`` naming the place. A torn
/// tail (an append in progress, or a crash the writer has not yet recovered) ends the events
/// for now without an error. A reader is for one thread at a time; open one per thread.
public final class LogReader {
    public let directory: String
    let fileSystem: any FileSystem
    /// First sequences of the known segments, ascending.
    private(set) var segments: [UInt64] = []
    private(set) var logID: [UInt8]?
    /// The hash the first batch of the log must name.
    private(set) var genesis: ChainHash?
    private var firstTimestamps: [UInt64: LogTimestamp] = [:]
    /// The log's format, once its first data file exists.
    public private(set) var format: LogFormatVersion?
    /// The block headers this reader's seeks have read (format 2).
    let blockHeaders = BlockHeaderCache()
    /// The codec of the blocks in codec 2, if the log has any (``BlockPayloadCodec``).
    public let payloadCodec: (any BlockPayloadCodec)?

    /// Opens a reader. An existing empty directory is an empty log (a writer may be about to
    /// create it). A log whose blocks are in codec 2 is read with the codec they were written
    /// with (`payloadCodec`); without it, reading such a block fails as damage.
    ///
    /// - Throws: ``LogError`` `.notALog` when there is no directory or it holds other files.
    public init(
        directory: String, fileSystem: any FileSystem = PosixFileSystem(), payloadCodec: (any BlockPayloadCodec)? = nil
    ) throws {
        let fileSystem = fileSystem.confined(to: directory)
        self.payloadCodec = payloadCodec
        self.directory = directory
        self.fileSystem = fileSystem
        guard let status = try io("look at \(directory)", { try fileSystem.status(directory) }) else {
            throw LogError(.notALog, "there is no event log at \(directory)", file: directory)
        }
        guard status.kind == .directory else {
            throw LogError(.notALog, "\(directory) is a file, not an event log directory", file: directory)
        }
        let listing = try refresh()
        if format == nil, segments.isEmpty, !listing.foreign.isEmpty {
            throw LogError(
                .notALog, "\(directory) holds files that are not part of an event log", file: directory)
        }
    }

    /// Lists the directory again, to see segments created since.
    @discardableResult
    func refresh() throws -> SegmentFiles.Listing {
        if format == nil { format = try LogFormatVersion.of(directory: directory, fileSystem: fileSystem) }
        let listing = try SegmentFiles.list(directory, fileSystem)
        // A format-2 log's files are read by BlockTailCursor and LogDirectory.
        if format == .v2 { return listing }
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
        return listing
    }

    /// Events from `sequence` (default: the first) through `last` (default: as far as the log
    /// goes, including appends that land while the cursor is used).
    public func events(from sequence: UInt64 = 1, through last: UInt64? = nil) throws -> LogCursor {
        try events(from: sequence, through: last, startingAt: nil)
    }

    /// The same, reading the active segment from `position` (a head lookup's, just made:
    /// ``PendingHead/tailPosition()``) rather than from its first record, when the position is
    /// in that segment and at or before `sequence`.
    func events(from sequence: UInt64, through last: UInt64?, startingAt position: TailPosition?) throws -> LogCursor {
        guard sequence >= 1 else { throw LogError(.invalidArgument, "sequence numbers start at 1") }
        return LogCursor(reader: self, start: .sequence(sequence), lastSequence: last, lastTime: nil, tailPosition: position)
    }

    /// Events whose timestamp is at or after `time`, through `last` (inclusive) when given.
    public func events(since time: LogTimestamp, through last: LogTimestamp? = nil) throws -> LogCursor {
        LogCursor(reader: self, start: .time(time), lastSequence: nil, lastTime: last)
    }

    /// The event with this sequence number, or nil when the log does not reach it (yet).
    public func event(at sequence: UInt64) throws -> LogEvent? {
        let cursor = try events(from: sequence, through: sequence)
        return try cursor.next()
    }

    /// The head at `sequence`: in a format-2 log, the event chain's head after that event (any
    /// sequence); in a format-1 log, the hash of the batch whose last event is `sequence` (nil
    /// when no batch ends exactly there). For 0, the chain's anchor; nil when the log does not
    /// reach `sequence`. Checks what it reads as every read does.
    public func head(at sequence: UInt64) throws -> LogHead? {
        if segments.isEmpty { try refresh() }
        if format == .v2 { return try ChainHeads.head(
            at: sequence, directory: directory, fileSystem: fileSystem, payloadCodec: payloadCodec, headers: blockHeaders) }
        guard let genesis else { return nil }
        if sequence == 0 { return LogHead(sequence: 0, hash: genesis) }
        let cursor = LegacyCursor(reader: self, start: .sequence(sequence), lastSequence: sequence, lastTime: nil)
        defer { cursor.close() }
        guard let batch = try cursor.batchHolding(sequence), batch.lastSequence == sequence else { return nil }
        return LogHead(sequence: sequence, hash: batch.hash)
    }

    /// ``head(at:)`` begun now, on another core where the log allows it (format 2, whose heads
    /// are read from the files alone), so that a caller can load something beside it; `value()`
    /// waits for it. A format-1 log's head, or one on a file system whose calls must come in one
    /// order (``FileIO/FileSystem/allowsReadAhead``), is read by this reader when `value()` is
    /// called.
    public func headInBackground(at sequence: UInt64) -> PendingHead {
        if segments.isEmpty { try? refresh() }
        guard format == .v2, fileSystem.allowsReadAhead else {
            return PendingHead(givesPositions: false) { try self.head(at: sequence).map { ($0, nil) } }
        }
        let (directory, fileSystem, headers, codec) = (directory, fileSystem, blockHeaders, payloadCodec)
        let pending = PendingHead.Box()
        DispatchQueue.global(qos: .userInitiated).async(group: pending.group) {
            pending.result = Result {
                try ChainHeads.headAndPosition(
                    at: sequence, directory: directory, fileSystem: fileSystem, payloadCodec: codec, headers: headers)
            }
        }
        return PendingHead(givesPositions: true) {
            pending.group.wait()
            return try pending.result!.get()
        }
    }

    /// The sequence number of the last complete event (0 for an empty log).
    public func lastSequence() throws -> UInt64 {
        try refresh()
        if format == .v2 { return try ChainHeads.lastSequence(directory: directory, fileSystem: fileSystem) }
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

    /// Follows the log: every event from `sequence` on, waiting for new appends as they land
    /// (checking every `pollInterval`). Ends when the task is cancelled.
    public func follow(from sequence: UInt64 = 1, pollInterval: Duration = .milliseconds(20)) -> LogFollower {
        LogFollower(cursor: LogCursor(reader: self, start: .sequence(max(1, sequence)), lastSequence: nil, lastTime: nil),
                    pollInterval: pollInterval)
    }

    func openSegment(_ firstSequence: UInt64) throws -> SegmentHandle {
        try SegmentHandle.open(directory: directory, firstSequence: firstSequence, fileSystem: fileSystem, logID: logID)
    }

    /// The position in ``segments`` of the segment holding `sequence` (the last one starting at
    /// or before it).
    func segmentPosition(holding sequence: UInt64) -> Int? {
        guard let position = segments.lastIndex(where: { $0 <= sequence }) else { return nil }
        return position
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
        guard let head = try segment.window.bytes(at: Int64(LogFormat.segmentHeaderSize), count: LogFormat.batchHeaderSize),
            case .success(let header) = BatchHeader.decode(head)
        else { return nil }
        firstTimestamps[firstSequence] = header.firstTimestamp
        return header.firstTimestamp
    }
}
