import FileIO

/// An append-only log of events on disk: zstd-compressed batches, CRC32C-checked,
/// SHA-256-chained, in segment files (the layout is in `docs/FORMAT.md`).
///
/// ```swift
/// let log = try EventLog.open(at: "/tmp/store/log")
/// let sequence = try log.append(Array("hello".utf8))           // 1, durable on return
/// let range = try await log.append(contentsOf: [a, b, c])     // 2..<5, one atomic batch
/// for event in try log.reader().events(from: 1) { … }
/// try log.close()
/// ```
///
/// Rules (each is tested; see `docs/LOG.md`):
/// 1. Sequence numbers are dense and increasing from 1; timestamps never decrease.
/// 2. An append returns once the configured ``LogConfiguration/Durability`` is reached; under
///    `.always` it survives kill -9 and power loss.
/// 3. One append is one batch or part of one: after a crash all of its events are there or none.
/// 4. Only one writer per log, across processes; the second gets ``LogError/Code/locked``
///    naming the holder. Readers (``LogReader``) take no lock and see a prefix.
/// 5. A refused append (too large, clock went backwards, log closed) changes nothing on disk.
///
/// `EventLog` is `Sendable`: any number of threads and tasks may append at once. Appends that
/// arrive while one is being written wait and are written together as the next batch (group
/// commit), so concurrent appenders share one `fsync` (see ``GroupCommit``). Async appends never
/// block a thread of the cooperative pool: the log's own writer thread does their I/O.
public final class EventLog: @unchecked Sendable {
    /// The log's directory.
    public let directory: String
    public let configuration: LogConfiguration
    /// What opening found and did: a torn tail cut, indexes rebuilt.
    public let recovery: RecoveryReport
    let fileSystem: any FileSystem

    let core: GroupCommit  // internal for the tests that check it is freed
    private let lock: any HeldLock
    /// Format 2 only: the log's compactions.
    private let compactor: Compactor?
    /// The check of the tail checkpoint this log was opened from, if it was (format 2).
    private let tailCheck: TailCheck?

    /// Opens the log in `directory` for writing, creating it when missing (unless the
    /// configuration says not to), and recovers from a crash (see ``recovery``).
    ///
    /// - Throws: ``LogError`` — `.locked` when another writer has it open, `.notALog` when the
    ///   path holds something else, `.corrupt` when damage is found that is not a torn tail
    ///   (nothing is changed then), `.io` when the file system fails.
    public static func open(
        at directory: String, configuration: LogConfiguration = LogConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> EventLog {
        let fileSystem = fileSystem.confined(to: directory)
        try configuration.validate()
        switch try io("look at \(directory)", { try fileSystem.status(directory) }) {
        case nil:
            // An upgrade interrupted between its renames leaves no log here: finish it first.
            if try LogUpgrade.finishInterrupted(directory: directory, fileSystem: fileSystem) { break }
            guard configuration.createIfMissing else {
                throw LogError(.notALog, "there is no event log at \(directory)", file: directory)
            }
            try io("create the log directory \(directory)") { try fileSystem.createDirectoryDurably(directory) }
        case let status? where status.kind != .directory:
            throw LogError(.notALog, "\(directory) is a file, not an event log directory", file: directory)
        default:
            break
        }
        // A log opened to write is format 2; an old one is refused before anything is touched (not
        // even the lock file). Only the tests write format 1, through a fixture writer.
        if configuration.fixtureWriter == nil, try LogFormatVersion.of(directory: directory, fileSystem: fileSystem) == .v1 {
            throw LogError(
                .needsUpgrade,
                "the log at \(directory) is in format 1, which this version reads but no longer writes; upgrade it to"
                    + " format 2 first (LogUpgrade, or `vt upgrade`: the old log is kept beside the new one)",
                file: directory)
        }
        let lock = try takeLock(of: directory, holder: holderLine(), fileSystem: fileSystem) { holder in
            "the log at \(directory) is already open for writing by another program (\(holder)); close it first, or open"
                + " the log read-only with LogReader"
        }
        let writer: any CommitWriter
        let report: RecoveryReport
        do {
            if let fixture = configuration.fixtureWriter,
                try LogFormatVersion.of(directory: directory, fileSystem: fileSystem) != .v2
            {
                (writer, report) = try fixture.openWriter(directory: directory, configuration: configuration, fileSystem: fileSystem)
            } else {
                (writer, report) = try TailRecovery.openWriter(directory: directory, configuration: configuration, fileSystem: fileSystem)
            }
        } catch {
            lock.release()
            throw error
        }
        return EventLog(
            directory: directory, configuration: configuration, fileSystem: fileSystem, lock: lock, writer: writer,
            recovery: report)
    }

    private init(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem, lock: any HeldLock,
        writer: any CommitWriter, recovery: RecoveryReport
    ) {
        self.directory = directory
        self.configuration = configuration
        self.fileSystem = fileSystem
        self.lock = lock
        self.recovery = recovery
        if let tail = writer as? TailWriter {
            let compactor = Compactor(directory: directory, configuration: configuration, fileSystem: fileSystem)
            tail.onSealed = { activeFirst in compactor.schedule(before: activeFirst) }
            // Segments sealed under an earlier writer are compacted now, in the background:
            // a store opened and closed in short sessions (a closing log stops a compaction
            // under way) would otherwise keep them until its next roll, and opening for writing
            // reads every sealed segment whole (docs/BENCHMARKS.md).
            if tail.hadSealedSegmentsAtOpen { compactor.schedule(before: tail.segment.header.firstSequence) }
            compactor.scheduleKeySummaries()
            self.compactor = compactor
            self.tailCheck = tail.pendingCheck
            self.tailStart = tail.openedAfter
        } else {
            self.compactor = nil
            self.tailCheck = nil
            self.tailStart = nil
        }
        self.core = GroupCommit(writer: writer, configuration: configuration)
    }

    deinit {
        try? core.close()
        compactor?.stop()
        lock.release()
    }

    /// The format this log is written in.
    public var format: LogFormatVersion { compactor == nil ? .v1 : .v2 }

    /// Format 2: seals the active segment (after the appends queued before this call) and
    /// compacts every sealed segment into a block file, now (FORMAT.md, "Compaction: the swap
    /// protocol"). Appends go on meanwhile, into the new active segment. A format-1 log has
    /// nothing to compact: ``LogError/Code/invalidArgument``. Then builds the key summaries the
    /// log lacks, with a key function configured (FORMAT.md, "Key summaries").
    @discardableResult
    public func compact() throws -> CompactionReport {
        guard let compactor else {
            throw LogError(.invalidArgument, "\(directory) is a format-1 log, which has no compaction; upgrade it to format 2 first")
        }
        let active = try core.submit(AppendRequest(payloads: [], timestamps: nil, isRoll: true)).lowerBound
        return try compactor.compactNow(before: active)
    }

    /// Format 2: erases the payloads of the events in `targets` (sequence → at most
    /// ``LogFormat/maxErasedKept`` bytes to keep in their place), keeping their sequence numbers,
    /// times and digests, and so every head hash (FORMAT.md, "Erasure: rewriting block files").
    /// Seals and compacts the hot tail first; appends go on meanwhile. Bytes in `quarantine/`
    /// are removed too. Running it again after a failure or a crash finishes the job; an event
    /// erased before stays erased with what it kept.
    ///
    /// - Throws: ``LogError`` `.invalidArgument` for a format-1 log, a sequence of no event, or
    ///   too many kept bytes (nothing is changed); `.corrupt` when a block file does not read back
    ///   as written (that file is left as it was); `.io`.
    @discardableResult
    public func erase(_ targets: [UInt64: [UInt8]]) throws -> ErasureReport {
        guard let compactor else {
            throw LogError(.invalidArgument, "\(directory) is a format-1 log, which cannot erase events; upgrade it to format 2 first")
        }
        let last = core.lastSequence
        if let bad = targets.first(where: { $0.key == 0 || $0.key > last }) {
            throw LogError(.invalidArgument, "there is no event \(bad.key) to erase (the log ends at \(last))", sequence: bad.key)
        }
        if let bad = targets.first(where: { $0.value.count > LogFormat.maxErasedKept }) {
            throw LogError(
                .invalidArgument, "an erased event keeps at most \(LogFormat.maxErasedKept) bytes, not \(bad.value.count)",
                sequence: bad.key)
        }
        let active = try core.submit(AppendRequest(payloads: [], timestamps: nil, isRoll: true)).lowerBound
        let (directory, configuration, fileSystem) = (directory, configuration, fileSystem)
        return try compactor.exclusively {
            let compaction = try Compaction.compact(
                directory: directory, configuration: configuration, fileSystem: fileSystem, before: active)
            var report = try Erasure.erase(
                targets, directory: directory, configuration: configuration, fileSystem: fileSystem)
            report.compaction = compaction
            return report
        }
    }

    /// Format 2: appends events another copy of this log already chained — a replica taking its
    /// original's events, erased ones included — as a block file of their own (FORMAT.md,
    /// "Taking chained events as a block file"). A hot-tail record cannot hold an erased event;
    /// this costs a compaction of the hot tail, so it is for the rare batch that has one. Seals and
    /// compacts first, then writes, checks and names the file, synced whatever the durability;
    /// appends wait meanwhile. The caller compares the head after it with the one the other copy
    /// shipped.
    ///
    /// - Throws: ``LogError`` `.invalidArgument` for a format-1 log, or events that do not start
    ///   right after the last one, follow one another and keep their times in order (nothing is
    ///   appended); `.io`, `.corrupt` when the file does not read back as written (nothing is
    ///   appended either); `.writerFailed` when the file was named but no segment could be started
    ///   after it (the events are in; reopen the log).
    @discardableResult
    public func appendAsBlock(_ events: [LogEvent]) throws -> Range<UInt64> {
        guard let compactor else {
            throw LogError(.invalidArgument, "\(directory) is a format-1 log, which cannot take events as a block file; upgrade it to format 2 first")
        }
        guard !events.isEmpty else { return emptyRange() }
        let active = try core.submit(AppendRequest(payloads: [], timestamps: nil, isRoll: true)).lowerBound
        let (directory, configuration, fileSystem, core) = (directory, configuration, fileSystem, core)
        return try compactor.exclusively {
            _ = try Compaction.compact(directory: directory, configuration: configuration, fileSystem: fileSystem, before: active)
            return try core.submit(AppendRequest(sealing: events))
        }
    }

    /// Format 2: starts checking, in the background, the tail checkpoint this log was opened from
    /// (``RecoveryReport/usedTailCheckpoint``; FORMAT.md, "Tail checkpoint"): the active segment's
    /// events up to its end of data rehashed and compared with it. An owner that reads the log right after opening it
    /// (a store replaying to its state) calls this once that is done, so that the two do not
    /// share the cores; otherwise the first append or the close starts it. Either waits for it,
    /// and a checkpoint found wrong makes the log refuse appends until it is reopened. Does
    /// nothing when there is nothing to check or the check has started.
    ///
    /// `position`, where the owner's own scan of the active segment stopped
    /// (``PendingHead/tailPosition()``), spares the check the events before it.
    func startTailCheck(from position: TailPosition? = nil) {
        tailCheck?.start(from: position)
    }

    /// Format 2: where the writer before this one started appending, as the tail checkpoint
    /// this log was opened from says (FORMAT.md, "Tail checkpoint": the start), when that lies
    /// in the active segment: a record boundary, with the head there. A store takes its snapshot
    /// at a clean close, where the next writer starts, so after a crash its newest snapshot lies
    /// here, and this head spares it rehashing the segment up to there.
    ///
    /// Like the checkpoint's own head, it is not checked when the log opens: the tail check
    /// (``startTailCheck(from:)``) compares it too, the first append and the close wait for
    /// that, and a start found wrong makes the log refuse appends until it is reopened.
    let tailStart: TailPosition?

    /// The head where the writer before this one started appending, as the tail checkpoint
    /// this log opened from says (``tailStart``), unchecked until the tail check has run: for
    /// checks and diagnostics. An owner resuming from it uses ``LogResumption``.
    public var previousWriterStart: LogHead? { tailStart?.head }

    /// Format 2: builds now the key summaries the log lacks (FORMAT.md, "Key summaries"), after
    /// any compaction under way, and returns how many; 0 without a key function
    /// (``LogConfiguration/blockKeys``) or in a format-1 log. Opening the log starts the same
    /// work in the background; this is for a caller that wants it done before it goes on.
    @discardableResult
    public func buildKeySummaries() throws -> Int {
        try compactor?.buildKeySummariesNow() ?? 0
    }

    /// Format 2: what background compaction has done so far, and its last failure, if the last
    /// attempt failed (the segments are then still there; the next roll tries again).
    public var backgroundCompactions: (reports: [CompactionReport], lastError: LogError?) {
        (compactor?.reports ?? [], compactor?.lastError)
    }

    /// Format 2: waits until background compaction has nothing scheduled or running, so that
    /// ``backgroundCompactions`` tells everything the rolls and the open so far asked for.
    /// Returns at once when the log compacts in the foreground only, or is closing.
    public func waitForBackgroundCompaction() {
        compactor?.waitUntilIdle()
    }

    /// The sequence number of the last event appended (0 for an empty log).
    public var lastSequence: UInt64 { core.lastSequence }

    /// The last sequence number and the hash of the batch that ends there: the head of the
    /// chain, which commits to every byte before it. For an empty log, sequence 0 and the
    /// chain's anchor (FORMAT.md, "The hash chain").
    public var head: LogHead { core.head }

    /// The time of the last event appended (nil for an empty log), as the writer holds it:
    /// no read of the log's end.
    public var lastTimestamp: LogTimestamp? { core.lastTimestamp }

    // MARK: Appending

    /// Appends one event and returns its sequence number once it is as durable as configured.
    @discardableResult
    public func append(_ payload: [UInt8]) throws -> UInt64 {
        try core.submit(try request([payload], timestamps: nil)).lowerBound
    }

    /// Appends events as one atomic batch; returns their sequence numbers (empty for none).
    @discardableResult
    public func append(contentsOf payloads: [[UInt8]]) throws -> Range<UInt64> {
        guard !payloads.isEmpty else { return emptyRange() }
        return try core.submit(try request(payloads, timestamps: nil))
    }

    /// Appends events with the timestamps they already have (for import): one per payload, not
    /// decreasing, and not before the log's last event.
    @discardableResult
    public func append(contentsOf payloads: [[UInt8]], timestamps: [LogTimestamp]) throws -> Range<UInt64> {
        guard !payloads.isEmpty else { return emptyRange() }
        return try core.submit(try request(payloads, timestamps: timestamps))
    }

    @discardableResult
    public func append(_ payload: [UInt8]) async throws -> UInt64 {
        try await core.submit(try request([payload], timestamps: nil)).lowerBound
    }

    @discardableResult
    public func append(contentsOf payloads: [[UInt8]]) async throws -> Range<UInt64> {
        guard !payloads.isEmpty else { return emptyRange() }
        return try await core.submit(try request(payloads, timestamps: nil))
    }

    @discardableResult
    public func append(contentsOf payloads: [[UInt8]], timestamps: [LogTimestamp]) async throws -> Range<UInt64> {
        guard !payloads.isEmpty else { return emptyRange() }
        return try await core.submit(try request(payloads, timestamps: timestamps))
    }

    /// Appends events that depend on where they land: when this append's turn comes, the log's
    /// writer calls `prepare` with the sequence number and time the events get (``CommitSlot``),
    /// decided there, once, and groups what it makes with the appends queued beside it into one
    /// record and one sync. `settler` hears how that record ended before this returns
    /// (``CommitSettler``). The events of one call stay together; `prepare` may be called again
    /// for a later record when they did not fit in this one (``PreparedEvents``). A log has one
    /// settler (its one preparing appender: a store's actions); another is refused.
    ///
    /// - Returns: the events' sequence numbers (empty when `prepare` made none).
    /// - Throws: ``LogError``: `.eventTooLarge`, `.batchTooLarge` for what no record can hold
    ///   (nothing is appended), `.invalidArgument` for a second settler, the write's failures.
    @discardableResult
    public func append(
        preparing prepare: @escaping @Sendable (CommitSlot) -> PreparedEvents, settler: any CommitSettler
    ) async throws -> Range<UInt64> {
        try await core.submit(AppendRequest(preparing: prepare, settler: settler))
    }

    /// Makes every append so far durable, whatever the policy.
    public func sync() throws {
        _ = try core.submit(AppendRequest(payloads: [], timestamps: nil, isSync: true))
    }

    public func sync() async throws {
        _ = try await core.submit(AppendRequest(payloads: [], timestamps: nil, isSync: true))
    }

    /// Waits for appends in flight, syncs, trims the preallocated tail and releases the lock.
    /// Later calls on this instance throw ``LogError/Code/closed``. Calling it twice is harmless.
    public func close() throws {
        defer { lock.release() }
        defer { compactor?.stop() }
        try core.close()
    }

    /// A reader over this log's directory.
    public func reader() throws -> LogReader {
        try LogReader(directory: directory, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec)
    }

    // MARK: Checks

    /// Checks an append before it queues: a refused append never reaches the disk.
    private func request(_ payloads: [[UInt8]], timestamps: [LogTimestamp]?) throws -> AppendRequest {
        for (position, payload) in payloads.enumerated() where payload.count > configuration.maxEventSize {
            throw LogError(
                .eventTooLarge,
                "event \(position) of the append is \(payload.count) bytes; the limit is \(configuration.maxEventSize)")
        }
        if let timestamps {
            guard timestamps.count == payloads.count else {
                throw LogError(
                    .invalidArgument, "\(payloads.count) events were given \(timestamps.count) timestamps")
            }
            guard zip(timestamps, timestamps.dropFirst()).allSatisfy({ $0 <= $1 }) else {
                throw LogError(.invalidArgument, "the events' timestamps decrease; the log's time never goes back")
            }
        }
        let request = AppendRequest(payloads: payloads, timestamps: timestamps)
        guard request.rawSize <= configuration.maxBatchSize else {
            throw LogError(
                .batchTooLarge,
                "the append holds about \(request.rawSize) bytes; one batch may hold \(configuration.maxBatchSize)."
                    + " Split it into several appends")
        }
        return request
    }

    private func emptyRange() -> Range<UInt64> {
        let next = lastSequence + 1
        return next..<next
    }
}
