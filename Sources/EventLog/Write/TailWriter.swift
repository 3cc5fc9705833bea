import FileIO

/// Format 2's writer: one hot-tail record per group commit (FORMAT.md, "Hot-tail record"), the
/// event chain kept as it goes, a new segment when the active one is full. Sealed segments are
/// left to the compactor.
final class TailWriter: CommitWriter {
    let directory: String
    let fileSystem: any FileSystem
    let configuration: LogConfiguration
    let logID: [UInt8]
    let origin: LogOrigin
    private(set) var nextSequence: UInt64
    private(set) var lastTime: Int64
    private(set) var chain: EventChain
    private(set) var segment: ActiveTail
    private var builder = TailRecordBuilder()
    private var output: [UInt8] = []
    private let compressor: ZstdCompressor
    private(set) var hasUnsyncedWrites = false
    private(set) var failure: LogError?
    /// Set while a roll has not completed: the next record waits for it. A roll that failed
    /// after naming the new segment leaves that (empty) file behind; retrying before any
    /// append writes the same name again, so no event ever lands after a segment that starts
    /// beyond it.
    private var mustRoll = false
    /// Called (on the leader's thread, after a roll) with the new active segment's first
    /// sequence: everything before it is sealed. The background compactor's cue.
    var onSealed: (@Sendable (UInt64) -> Void)?
    /// Whether the log was opened with sealed segments not yet compacted: a writer before this
    /// one closed while its compaction was under way (or never ran one).
    var hadSealedSegmentsAtOpen = false
    /// The background check of the tail checkpoint this writer started from, until the first
    /// append or the close waits for it (FORMAT.md, "Tail checkpoint").
    var pendingCheck: TailCheck?
    /// The end of data named by the last tail checkpoint this writer left beside the active
    /// segment; the end of its header before the first.
    private var checkpointedEnd = Int64(LogFormat.segmentHeaderSize)
    /// Where this writer started appending, written into its checkpoints while the segment is
    /// the one it started in (FORMAT.md, "Tail checkpoint": the start).
    private var start: TailCheckpoint.Point?
    /// Where the writer before this one started, as the checkpoint this one opened from says
    /// (unchecked until ``pendingCheck`` is done): ``EventLog/tailStart``.
    var openedAfter: TailPosition?

    var headHash: ChainHash { chain.head }
    var lastEventTime: LogTimestamp? { nextSequence > 1 ? LogTimestamp(microsecondsSinceEpoch: lastTime) : nil }

    init(
        directory: String, fileSystem: any FileSystem, configuration: LogConfiguration, logID: [UInt8], origin: LogOrigin,
        nextSequence: UInt64, lastTime: Int64, chain: EventChain, segment: ActiveTail
    ) throws {
        self.directory = directory
        self.fileSystem = fileSystem
        self.configuration = configuration
        self.logID = logID
        self.origin = origin
        self.nextSequence = nextSequence
        self.lastTime = lastTime
        self.chain = chain
        self.segment = segment
        self.compressor = try ZstdCompressor(level: configuration.compressionLevel)
        start = TailCheckpoint.Point(dataEnd: segment.dataEnd, nextSequence: nextSequence, lastTime: lastTime, chain: chain.head)
    }

    func commit(_ group: [AppendRequest]) -> [Result<Range<UInt64>, LogError>] {
        // Events taken as a block file go in alone, in their place among the group's requests.
        if let index = group.firstIndex(where: { $0.sealed != nil }) {
            return commit(Array(group[..<index])) + [takeSealed(group[index].sealed!)] + commit(Array(group[(index + 1)...]))
        }
        settleCheckpoint()
        if let failure { return group.map { _ in .failure(TailWriter.refusal(after: failure)) } }
        builder.reset(timeBefore: lastTime)
        var pendingChain = chain
        var round = CommitRound(
            group, next: nextSequence, last: LogTimestamp(microsecondsSinceEpoch: lastTime), clock: configuration.clock
        ) { payload, time in
            builder.add(payload, at: time.microsecondsSinceEpoch)
            pendingChain.append(time: time, payload: payload[...])
        }
        let wrote = round.finish(
            durability: configuration.durability,
            write: {
                try writeRecord()
                chain = pendingChain
            }, hasUnsyncedWrites: { hasUnsyncedWrites }, sync: sync)
        var results = round.results
        guard wrote else { return results }
        if group.contains(where: \.isRoll) {
            let rolled = rollNow()
            for (position, request) in group.enumerated() where request.isRoll { results[position] = rolled }
        }
        return results
    }

    /// Syncs the active segment, and leaves a tail checkpoint when enough was written since
    /// the last one (FORMAT.md, "Tail checkpoint").
    func sync() throws {
        try syncSegment()
        if let interval = configuration.tailCheckpointInterval, segment.dataEnd - checkpointedEnd >= Int64(interval) {
            leaveCheckpoint()
        }
    }

    private func syncSegment() throws {
        if let failure { throw TailWriter.refusal(after: failure) }
        do {
            try segment.file.sync()
            hasUnsyncedWrites = false
        } catch let error as IOError {
            let failure = LogError(
                .writerFailed,
                "could not sync \(segment.path); appends since the last sync may or may not be in the log when it is"
                    + " reopened. Reopen the log to continue",
                file: segment.path, cause: error)
            self.failure = failure
            throw failure
        }
    }

    /// Writes what the writer knows now beside the active segment, whose records up to its end
    /// of data must be synced. Derived data: without it an open only rehashes more.
    private func leaveCheckpoint() {
        // A writer that appended nothing leaves the start it opened with, as it found it: a
        // store opened and closed without a change leaves its files as they were.
        var start = self.start
        if let own = start, own.dataEnd == segment.dataEnd, let before = openedAfter { start = before.point }
        let checkpoint = TailCheckpoint(
            firstSequence: segment.header.firstSequence, logID: logID, dataEnd: segment.dataEnd, nextSequence: nextSequence,
            lastTime: lastTime, chain: chain.head, start: start)
        if (try? checkpoint.write(in: directory, fileSystem: fileSystem)) != nil { checkpointedEnd = segment.dataEnd }
    }

    /// Trims the zero tail, syncs, and leaves a tail checkpoint for the next open.
    func close() throws {
        defer { try? segment.file.close() }
        settleCheckpoint()
        guard failure == nil else { return }
        try io("trim the preallocated tail of \(segment.path)") { try segment.file.truncate(to: segment.dataEnd) }
        try syncSegment()
        leaveCheckpoint()
    }

    /// Waits for the check of the tail checkpoint this writer started from, if any; when the
    /// segment's events disagree with it, the writer refuses appends until the log is reopened
    /// (the checkpoint is gone by then, and the reopen rehashes the segment).
    private func settleCheckpoint() {
        guard let check = pendingCheck else { return }
        pendingCheck = nil
        if let problem = check.wait(), failure == nil {
            failure = LogError(
                .writerFailed, "the tail checkpoint this log was opened from disagrees with its events (\(problem));"
                    + " nothing was appended. Reopen the log: it will rehash the segment instead",
                file: segment.path)
        }
    }

    private static func refusal(after failure: LogError) -> LogError {
        LogError(.writerFailed, "the log refuses appends after an earlier failure; reopen it", cause: failure)
    }

    private func writeRecord() throws {
        output.removeAll(keepingCapacity: true)
        builder.encode(compressor: compressor, into: &output)
        if mustRoll || segment.dataEnd >= Int64(configuration.hotTailSegmentSize),
            segment.dataEnd > Int64(LogFormat.segmentHeaderSize)
        {
            try roll()
        }
        let offset = segment.dataEnd
        let end = offset + Int64(output.count)
        try preallocate(upTo: end)
        try ZeroTail.write(
            output, to: segment.file, path: segment.path, at: offset, allocatedEnd: &segment.allocatedEnd, failure: &failure)
        segment.dataEnd = end
        segment.allocatedEnd = max(segment.allocatedEnd, end)
        nextSequence += UInt64(builder.count)
        lastTime = builder.lastTime
        hasUnsyncedWrites = true
    }

    /// Writes `events`, chained by another copy of the log, as a block file after the last
    /// event, then moves the active segment after them (FORMAT.md, "Taking chained events as a
    /// block file", steps 2 to 4). The caller sealed and compacted first: the active segment must
    /// be empty, or nothing is written.
    private func takeSealed(_ events: [LogEvent]) -> Result<Range<UInt64>, LogError> {
        settleCheckpoint()
        if let failure { return .failure(TailWriter.refusal(after: failure)) }
        guard segment.dataEnd == Int64(LogFormat.segmentHeaderSize) else {
            return .failure(LogError(
                .invalidArgument, "events were appended after the hot tail was compacted; the block file was not written",
                sequence: nextSequence))
        }
        let first = nextSequence
        let taken: ChainedEventsFile.Written
        do {
            taken = try ChainedEventsFile.write(
                events, directory: directory, after: LogHead(sequence: first - 1, hash: chain.head), timeBefore: lastTime,
                logID: logID, origin: origin, configuration: configuration, fileSystem: fileSystem)
        } catch {
            return .failure(error as? LogError ?? LogError(.io, "cannot write the events as a block file", cause: error))
        }
        // From the rename on the block file holds the events, and the empty segment is covered.
        let header = TailSegmentHeader(
            firstSequence: taken.head.sequence + 1, logID: logID, createdAt: configuration.clock.now(),
            timeBefore: taken.lastTime, chainBefore: taken.head.hash, origin: origin)
        do {
            try TailWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
            let next = try ActiveTail.open(
                directory: directory, header: header, dataEnd: Int64(LogFormat.segmentHeaderSize), fileSystem: fileSystem)
            let covered = segment
            segment = next
            nextSequence = taken.head.sequence + 1
            lastTime = taken.lastTime
            chain = EventChain(head: taken.head.hash, after: taken.head.sequence)
            checkpointedEnd = Int64(LogFormat.segmentHeaderSize)
            start = nil
            try? covered.file.close()
            // Left behind, the next open removes it: it is covered.
            try? fileSystem.removeFile(covered.path)
            try? fileSystem.removeFile(TailCheckpoint.path(directory, covered.header.firstSequence))
            try? fileSystem.syncDirectory(directory)
        } catch {
            failure = LogError(
                .writerFailed, "the events were written as a block file, but no segment could be started after it; reopen the log",
                cause: error)
            return .failure(failure!)
        }
        return .success(first..<nextSequence)
    }

    /// A roll asked for from outside (compaction of everything): seals the active segment when
    /// it holds anything.
    private func rollNow() -> Result<Range<UInt64>, LogError> {
        guard segment.dataEnd > Int64(LogFormat.segmentHeaderSize) else { return .success(nextSequence..<nextSequence) }
        do {
            // The caller compacts right after: no background compaction for this roll.
            try roll(notify: false)
            return .success(nextSequence..<nextSequence)
        } catch {
            return .failure(error as? LogError ?? LogError(.io, "cannot start a new segment", cause: error))
        }
    }

    /// Seals the active segment (zero tail cut, synced) and starts the next, whose header carries
    /// the chain's head and the last time (FORMAT.md, "Segment header (136 bytes)").
    private func roll(notify: Bool = true) throws {
        mustRoll = true
        try io("seal the segment \(segment.path)") { try segment.file.truncate(to: segment.dataEnd) }
        segment.allocatedEnd = segment.dataEnd
        if hasUnsyncedWrites { try syncSegment() }
        let header = TailSegmentHeader(
            firstSequence: nextSequence, logID: logID, createdAt: configuration.clock.now(), timeBefore: lastTime,
            chainBefore: chain.head, origin: origin)
        try TailWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let next: ActiveTail
        do {
            next = try ActiveTail.open(
                directory: directory, header: header, dataEnd: Int64(LogFormat.segmentHeaderSize), fileSystem: fileSystem)
        } catch let error as LogError {
            failure = LogError(.writerFailed, "the new segment could not be opened; reopen the log", cause: error)
            throw error
        }
        try? segment.file.close()
        // A sealed segment's checkpoint is of no use: only the active one's is read.
        if checkpointedEnd > Int64(LogFormat.segmentHeaderSize) {
            try? fileSystem.removeFile(TailCheckpoint.path(directory, segment.header.firstSequence))
        }
        segment = next
        checkpointedEnd = Int64(LogFormat.segmentHeaderSize)
        // Where this writer started lies in a sealed segment now.
        start = nil
        mustRoll = false
        if notify { onSealed?(header.firstSequence) }
    }

    /// Writes a new segment's header durably and atomically (temporary file, sync, rename, sync
    /// the directory).
    static func createSegment(directory: String, header: TailSegmentHeader, fileSystem: any FileSystem) throws {
        let path = SegmentFiles.segmentPath(directory, header.firstSequence)
        try io("create the segment \(path)") { try fileSystem.writeAtomically(header.encoded(), to: path) }
    }

    private func preallocate(upTo end: Int64) throws {
        guard configuration.preallocates else { return }
        segment.allocatedEnd = try ZeroTail.extend(
            segment.file, path: segment.path, from: segment.allocatedEnd, toCover: end, chunk: configuration.preallocationSize)
    }
}
