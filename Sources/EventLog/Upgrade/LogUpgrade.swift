import FileIO

/// What an upgrade did.
public struct UpgradeReport: Sendable, Hashable, CustomStringConvertible {
    /// The events carried over: 1 … `events`.
    public var events: UInt64 = 0
    /// The format-1 log's head hash after its last event, now in the new log's anchor.
    public var formatOneHead: ChainHash?
    /// The new chain's head after the same event.
    public var formatTwoHead: ChainHash?
    public var blockFiles = 0
    public var blocks = 0
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0
    /// Where the format-1 log now is, kept until a person removes it.
    public var formerLog = ""
    /// True when this call only finished an upgrade that was interrupted between its renames.
    public var finishedInterrupted = false
    /// True when an earlier upgrade's unfinished `<log>.upgrade` was found and removed first.
    public var removedAbandonedWork = false

    public init() {}

    public var description: String {
        if finishedInterrupted {
            return "finished an interrupted upgrade to format 2 (\(events) events); the format-1 log is kept in \(formerLog)"
        }
        return (removedAbandonedWork ? "removed an unfinished earlier upgrade; " : "") + "upgraded \(events) event\(events == 1 ? "" : "s") to format 2 (\(bytesBefore) bytes in format 1,"
            + " \(bytesAfter) in \(blocks) block\(blocks == 1 ? "" : "s") of \(blockFiles) block file"
            + "\(blockFiles == 1 ? "" : "s")); the format-1 log is kept in \(formerLog)"
    }
}

/// Converts a format-1 log into format 2 without losing its chain (FORMAT.md, "Upgrade from
/// format 1"): the new log is written beside the old one in `<log>.upgrade`, anchored to the
/// format-1 head, checked event by event against the old one, and swapped in by two renames;
/// the old log stays in `<log>.format1`.
///
/// ```swift
/// let report = try LogUpgrade.upgrade(directory: "/store/log")
/// ```
public enum LogUpgrade {
    /// Where an upgrade writes the new log.
    public static func workPath(of directory: String) -> String { directory + ".upgrade" }
    /// Where an upgrade leaves the format-1 log.
    public static func formerPath(of directory: String) -> String { directory + ".format1" }

    /// Blocks per block file: files about the size compaction makes from a few hot-tail
    /// segments, so an upgraded log looks like one that was always format 2.
    static let blocksPerFile = 8

    /// Upgrades the format-1 log in `directory`. Holds the log's lock throughout, so no writer
    /// appends while it runs. On any failure before the swap, only `<log>.upgrade` was written,
    /// and it is removed.
    ///
    /// - Parameter progress: called now and then with (events written, events in all).
    /// - Throws: ``LogError``: `.invalidArgument` when the log is already format 2, empty, or an
    ///   earlier upgrade's `<log>.format1` is still there; `.corrupt` when the format-1 log does
    ///   not verify (nothing is changed; `vt verify` names the damage); `.locked`; `.io`.
    public static func upgrade(
        directory: String, configuration: LogConfiguration = LogConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem(), progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> UpgradeReport {
        let fileSystem = fileSystem.confined(to: Path.directory(of: directory))
        let former = formerPath(of: directory), work = workPath(of: directory)
        if try finishInterrupted(directory: directory, fileSystem: fileSystem) {
            var report = UpgradeReport()
            report.finishedInterrupted = true
            report.formerLog = former
            report.events = try LogReader(directory: directory, fileSystem: fileSystem).lastSequence()
            return report
        }
        guard try io("look at \(former)", { try fileSystem.exists(former) }) == false else {
            throw LogError(
                .invalidArgument,
                "\(former) is still there from an earlier upgrade; move it away (or remove it) before upgrading again",
                file: former)
        }
        guard try io("look at \(directory)", { try fileSystem.status(directory) })?.kind == .directory else {
            throw LogError(.notALog, "there is no event log at \(directory)", file: directory)
        }
        let lock = try EventLog.takeLock(of: directory, holder: "vt upgrade, " + EventLog.holderLine(), fileSystem: fileSystem) {
            "the log at \(directory) is already open for writing by another program (\($0)); close it first"
        }
        defer { lock.release() }
        switch try LogFormatVersion.of(directory: directory, fileSystem: fileSystem) {
        case .v2?:
            throw LogError(.invalidArgument, "\(directory) is already a format-2 log; there is nothing to upgrade", file: directory)
        case nil:
            throw LogError(
                .invalidArgument, "\(directory) holds no events; it is written in format 2 from its first append",
                file: directory)
        case .v1?:
            break
        }
        // A torn tail is cut the way a writer's open would, so what is verified is what a writer
        // would have continued from.
        var settings = configuration
        settings.createIfMissing = false
        _ = try LegacyRecovery.recover(directory: directory, configuration: settings, fileSystem: fileSystem)
        // An upgrade that crashed before its swap left its work here: it is started again.
        let removedAbandonedWork = try removeUnfinished(directory: directory, fileSystem: fileSystem)

        // Step 1: the whole format-1 log verifies.
        let verified = try LogVerifier.verify(directory: directory, fileSystem: fileSystem)
        guard verified.eventsAreIntact, let head = verified.headHash else {
            let first = verified.problems.first
            throw LogError(
                verified.events == 0 && verified.isClean ? .invalidArgument : .corrupt,
                verified.events == 0 && verified.isClean
                    ? "\(directory) holds no events; it is written in format 2 from its first append"
                    : "the format-1 log does not verify (\(first?.description ?? "no head")); nothing was changed —"
                        + " `vt verify` names the damage and `vt repair` can cut it",
                file: first?.file, offset: first?.offset, sequence: first?.sequence)
        }
        var report = UpgradeReport()
        report.removedAbandonedWork = removedAbandonedWork
        report.events = verified.lastSequence
        report.formatOneHead = head
        report.bytesBefore = verified.storedBytes
        report.formerLog = former
        do {
            // Steps 2 and 3: write the new log beside the old, then read it back against the old.
            let origin = LogOrigin(sequence: verified.lastSequence, hash: head)
            try write(from: directory, to: work, origin: origin, configuration: configuration, fileSystem: fileSystem,
                      report: &report, progress: progress)
            try compare(directory, with: work, through: verified.lastSequence, configuration: configuration, fileSystem: fileSystem,
                report: &report)
        } catch {
            try? fileSystem.removeTree(work)
            throw error
        }
        // Step 4: the swap. Both folders are synced first, so their contents are durable under
        // whichever name survives.
        let parent = Path.directory(of: directory)
        try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
        try io("rename \(directory) to \(former)") { try fileSystem.rename(directory, to: former) }
        try io("sync \(parent)") { try fileSystem.syncDirectory(parent) }
        try io("rename \(work) to \(directory)") { try fileSystem.rename(work, to: directory) }
        try io("sync \(parent)") { try fileSystem.syncDirectory(parent) }
        return report
    }

    /// Writes events 1 … `origin.sequence` of the format-1 log into block files in `work`,
    /// then the empty active segment after them.
    private static func write(
        from directory: String, to work: String, origin: LogOrigin, configuration: LogConfiguration,
        fileSystem: any FileSystem, report: inout UpgradeReport, progress: ((UInt64, UInt64) -> Void)?
    ) throws {
        // Opening the log (in `upgrade`) already removed a leftover `work`, under the lock.
        try io("create \(work)") { try fileSystem.createDirectoryDurably(work) }
        let reader = try LogReader(directory: directory, fileSystem: fileSystem)
        guard let logID = reader.legacy?.logID else {
            throw LogError(.corrupt, "\(directory) has events but no segment header to take its log id from", file: directory)
        }
        var chain = origin.anchor(logID: logID)
        var time = LogFormat.timeBeforeFirstEvent
        var next: UInt64 = 1
        let cursor = try reader.events(from: 1, through: origin.sequence)
        while next <= origin.sequence {
            var writer = try BlockFileWriter(
                directory: work, firstSequence: next, timeBefore: time, chainBefore: chain,
                configuration: configuration, fileSystem: fileSystem)
            do {
                var raw = 0
                while raw < configuration.blockSize * blocksPerFile, writer.nextSequence <= origin.sequence, let event = try cursor.next() {
                    try writer.add(event.payload, at: event.timestamp.microsecondsSinceEpoch)
                    raw += event.payload.count
                    if event.sequence & 0xFFFF == 0 { progress?(event.sequence, origin.sequence) }
                }
                guard writer.nextSequence > next else {
                    throw LogError(.corrupt, "\(directory) ended at \(next - 1) while reading it, before \(origin.sequence)", file: directory)
                }
                _ = try writer.finish(logID: logID, origin: origin, createdAt: configuration.clock.now())
                try writer.commit()
            } catch {
                writer.abandon()
                throw error
            }
            report.blockFiles += 1
            report.blocks += writer.blockCount
            report.bytesAfter += writer.bytesWritten
            chain = writer.chainAfter
            time = writer.lastTime
            next = writer.nextSequence
        }
        progress?(origin.sequence, origin.sequence)
        report.formatTwoHead = chain
        let header = TailSegmentHeader(
            firstSequence: next, logID: logID, createdAt: configuration.clock.now(), timeBefore: time,
            chainBefore: chain, origin: origin)
        try TailWriter.createSegment(directory: work, header: header, fileSystem: fileSystem)
        report.bytesAfter += Int64(LogFormat.segmentHeaderSize)
    }

    /// Reads the new log back through the ordinary reader and checks every event against the
    /// old one, and the new chain with the verifier.
    private static func compare(
        _ directory: String, with work: String, through last: UInt64, configuration: LogConfiguration, fileSystem: any FileSystem,
        report: inout UpgradeReport
    ) throws {
        let check = try LogVerifier.verify(directory: work, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec)
        guard check.isClean, check.format == .v2, check.lastSequence == last, check.headHash == report.formatTwoHead else {
            throw LogError(
                .corrupt, "the upgraded log written in \(work) does not verify (\(check.problems.first?.description ?? "head or count differs"));"
                    + " nothing was changed",
                file: work)
        }
        let old = try LogReader(directory: directory, fileSystem: fileSystem).events(from: 1, through: last)
        let new = try LogReader(directory: work, fileSystem: fileSystem, payloadCodec: configuration.payloadCodec).events(from: 1, through: last)
        while let before = try old.next() {
            guard let after = try new.next(), after == before else {
                throw LogError(
                    .corrupt, "the upgraded log written in \(work) differs from the format-1 log at event \(before.sequence);"
                        + " nothing was changed",
                    file: work, sequence: before.sequence)
            }
        }
        guard try new.next() == nil else {
            throw LogError(.corrupt, "the upgraded log written in \(work) holds events after \(last); nothing was changed", file: work)
        }
    }

    /// Finishes an upgrade interrupted between its two renames (`<log>` missing, both
    /// `<log>.format1` and `<log>.upgrade` there), before anything opens the log. A `<log>`
    /// missing beside a lone `<log>.format1` is refused: creating an empty log there would
    /// hide the person's events.
    @discardableResult
    static func finishInterrupted(directory: String, fileSystem: any FileSystem) throws -> Bool {
        guard try io("look at \(directory)", { try fileSystem.status(directory) }) == nil else { return false }
        let former = formerPath(of: directory), work = workPath(of: directory)
        guard try io("look at \(former)", { try fileSystem.exists(former) }) else { return false }
        guard try io("look at \(work)", { try fileSystem.exists(work) }) else {
            throw LogError(
                .notALog,
                "there is no log at \(directory), but \(former) holds the format-1 log an upgrade left; rename it back to"
                    + " \(Path.name(of: directory)) to use it",
                file: directory)
        }
        // The upgrade holds the format-1 log's lock until its renames are done.
        let lock = try EventLog.takeLock(of: former, holder: "finishing an upgrade, " + EventLog.holderLine(), fileSystem: fileSystem) {
            "the log at \(directory) is being upgraded by another program (\($0))"
        }
        defer { lock.release() }
        guard try io("look at \(directory)", { try fileSystem.status(directory) }) == nil else { return false }
        let parent = Path.directory(of: directory)
        try io("rename \(work) to \(directory)") { try fileSystem.rename(work, to: directory) }
        try io("sync \(parent)") { try fileSystem.syncDirectory(parent) }
        return true
    }

    /// Removes what an upgrade interrupted before its swap left (`<log>.upgrade` beside a
    /// whole `<log>`). Called with the log's lock held, so no upgrade is running.
    static func removeUnfinished(directory: String, fileSystem: any FileSystem) throws -> Bool {
        let work = workPath(of: directory)
        guard try io("look at \(work)", { try fileSystem.exists(work) }) else { return false }
        try io("remove the unfinished upgrade \(work)") { try fileSystem.removeTree(work) }
        let parent = Path.directory(of: directory)
        try io("sync \(parent)") { try fileSystem.syncDirectory(parent) }
        return true
    }
}
