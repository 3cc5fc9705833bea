import FileIO

/// The explicit, separate repair of a damaged log (FORMAT.md, "Recovery and damage"): cut the
/// log back to the last good batch before the first damage, after saying what that drops.
///
/// ```swift
/// let plan = try LogRepair.plan(directory: path)
/// print(plan)                       // what would go, and why
/// if userAgrees { try LogRepair.execute(plan) }
/// ```
public enum LogRepair {
    /// Finds the first damage and what cutting there drops, and (format 2, given the key
    /// function) the key summaries that disagree with their blocks. Changes nothing.
    public static func plan(
        directory: String, fileSystem: any FileSystem = PosixFileSystem(), keys: BlockKeys? = nil,
        payloadCodec: (any BlockPayloadCodec)? = nil
    ) throws -> RepairPlan {
        let fileSystem = fileSystem.confined(to: directory)
        var plan = RepairPlan()
        plan.directory = directory
        let reader: LogReader
        do {
            reader = try LogReader(directory: directory, fileSystem: fileSystem, payloadCodec: payloadCodec)
        } catch let error as LogError where error.code == .corrupt {
            // The first segment is missing (format 1): nothing before the damage can be kept.
            plan.headerSize = Int64(LegacyFormat.segmentHeaderSize)
            let listing = try SegmentFiles.list(directory, fileSystem)
            plan.damage = .init(kind: .corruption, file: directory, sequence: 1, message: error.message)
            plan.laterSegments = listing.segments.map { SegmentFiles.segmentPath(directory, $0) }
            plan.segment = plan.laterSegments.first
            plan.laterSegments = Array(plan.laterSegments.dropFirst())
            plan.firstDroppedSequence = 1
            plan.bytes = try sizes(of: listing.segments.map { SegmentFiles.segmentPath(directory, $0) }, fileSystem)
            return plan
        }
        guard let reading = reader.reading else { return plan }
        return try reading.planRepair(keys: keys)
    }

    /// Carries out a plan: takes the writer's lock (so no writer is running), checks that the
    /// log still needs exactly this repair, removes the key summaries it names, copies what
    /// goes to `quarantine/`, then cuts.
    ///
    /// - Parameter keys: the key function the plan was made with.
    /// - Throws: ``LogError`` `.locked` when a writer has the log open; `.invalidArgument` when
    ///   the log changed since the plan was made (plan again).
    public static func execute(
        _ plan: RepairPlan, fileSystem: any FileSystem = PosixFileSystem(), keys: BlockKeys? = nil,
        payloadCodec: (any BlockPayloadCodec)? = nil
    ) throws {
        let fileSystem = fileSystem.confined(to: plan.directory)
        guard plan.isNeeded else { return }
        let directory = plan.directory
        let lock: any HeldLock
        do {
            lock = try fileSystem.lock(Path.join(directory, LogFiles.lockFileName), holder: "repair")
        } catch let held as LockHeldError {
            throw LogError(
                .locked, "the log at \(directory) is open for writing by \(held.holder); close it before repairing",
                file: held.path, cause: held)
        }
        defer { lock.release() }
        guard try self.plan(directory: directory, fileSystem: fileSystem, keys: keys, payloadCodec: payloadCodec) == plan else {
            throw LogError(.invalidArgument, "the log changed since the repair was planned; plan it again")
        }
        // Derived data, not quarantined: the events it was made from are all kept.
        for summary in plan.keySummaries {
            try io("remove \(summary)") { try fileSystem.removeFile(summary) }
        }
        guard plan.damage != nil, let segment = plan.segment else { return }
        for later in plan.laterSegments.reversed() {
            let bytes = try io("read \(later)") { try fileSystem.openFile(later, .readOnly).readAll() }
            _ = try Quarantine.keep(bytes, named: Path.name(of: later) + ".repair", in: directory, fileSystem: fileSystem)
            try io("remove \(later)") { try fileSystem.removeFile(later) }
            try? fileSystem.removeFile(indexPath(of: later))
        }
        let file = try io("open \(segment)") { try fileSystem.openFile(segment, .readWrite) }
        defer { try? file.close() }
        // A block file is never cut inside (its header counts its blocks): it goes whole.
        let headerSize = segment.hasSuffix(LogFormat.blockExtension)
            ? Int64.max : plan.headerSize
        if plan.offset < headerSize {
            // The segment's own header is damaged: the whole segment goes.
            let bytes = try io("read \(segment)") { try file.readAll() }
            _ = try Quarantine.keep(bytes, named: Path.name(of: segment) + ".repair", in: directory, fileSystem: fileSystem)
            try io("remove \(segment)") { try fileSystem.removeFile(segment) }
        } else {
            let size = try io("read the size of \(segment)") { try file.size() }
            let bytes = try io("read \(segment)") { try file.read(count: Int(size - plan.offset), at: plan.offset) }
            _ = try Quarantine.keep(
                bytes, named: "\(Path.name(of: segment))-\(plan.offset).repair", in: directory, fileSystem: fileSystem)
            try io("cut \(segment)") {
                try file.truncate(to: plan.offset)
                try file.sync()
            }
        }
        // Indexes of what was cut are stale; the next open for writing rebuilds them.
        try? fileSystem.removeFile(indexPath(of: segment))
        try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
    }

    /// Format 2: the first damage that verification finds, and everything from it on. Damage in
    /// a block file takes that whole file and every later one.
    static func planBlockTail(
        directory: String, fileSystem: any FileSystem, keys: BlockKeys?, payloadCodec: (any BlockPayloadCodec)?
    ) throws -> RepairPlan {
        var plan = RepairPlan()
        plan.format = .v2
        plan.headerSize = Int64(LogFormat.segmentHeaderSize)
        plan.directory = directory
        var report = VerificationReport()
        try BlockTailVerifier.walk(
            directory: directory, fileSystem: fileSystem, keys: keys, payloadCodec: payloadCodec, report: &report, progress: nil)
        plan.keySummaries = report.problems.filter { $0.kind == .keySummary }.map(\.file)
        guard let damage = report.problems.first(where: \.isDamage) else { return plan }
        plan.damage = damage
        let listing = try LogListing.list(directory, fileSystem)
        let all = listing.blockFiles.map { SegmentFiles.blockFilePath(directory, $0) }
            + listing.segments.map { SegmentFiles.segmentPath(directory, $0) }
        let cutAt = all.firstIndex(of: damage.file) ?? 0
        guard cutAt < all.count else { return plan }
        plan.segment = all[cutAt]
        plan.offset = all[cutAt].hasSuffix(LogFormat.blockExtension) ? 0 : damage.offset ?? 0
        plan.laterSegments = Array(all[(cutAt + 1)...])
        plan.firstDroppedSequence = damage.sequence ?? report.lastSequence + 1
        let cutSize = (try fileSystem.status(all[cutAt]))?.size ?? 0
        plan.bytes = max(0, cutSize - plan.offset) + (try sizes(of: plan.laterSegments, fileSystem))
        return plan
    }

    private static func indexPath(of segment: String) -> String {
        String(segment.dropLast(LogFiles.segmentExtension.count)) + LogFiles.indexExtension
    }

    static func sizes(of paths: [String], _ fileSystem: any FileSystem) throws -> Int64 {
        try paths.reduce(0) { $0 + ((try fileSystem.status($1))?.size ?? 0) }
    }
}
