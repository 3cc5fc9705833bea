import FileIO

/// Builds a new format-2 log from events another copy of it holds (a restore from a
/// replica): the events keep their sequence numbers, times and erasures, and the new log has
/// the other's identity, so its chain is the same, hash for hash. Events go into sealed block
/// files written by the swap protocol's writer (synced, read back and rehashed); ``finish()``
/// adds the empty hot-tail segment after them, after which the folder opens as any log.
///
/// ```swift
/// var builder = try LogBuilder(directory: "/new/log", identity: identity)
/// for event in events { try builder.add(event) }   // 1, 2, 3, … with their times
/// let head = try builder.finish()                   // compare with the original's head
/// ```
///
/// Memory: one block file's worth of events at most. On any failure, ``abandon()`` removes
/// what was written; the caller owns the folder.
public struct LogBuilder {
    public let directory: String
    public let identity: LogIdentity
    // Internal, not private, for LogBuilder+Adopt.swift.
    let configuration: LogConfiguration
    let fileSystem: any FileSystem
    private var writer: BlockFileWriter?
    private var rawInFile = 0
    var chain: ChainHash
    var time = LogFormat.timeBeforeFirstEvent
    /// The sequence number the next event must have.
    public internal(set) var nextSequence: UInt64 = 1
    var finished = false

    /// Block files about the size compaction makes, as ``LogUpgrade`` writes them.
    private static let blocksPerFile = 8

    /// Creates `directory`, which must not exist yet.
    public init(
        directory: String, identity: LogIdentity, configuration: LogConfiguration = LogConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws {
        let fileSystem = fileSystem.confined(to: Path.directory(of: directory))
        guard identity.logID.count == LogFiles.logIDSize else {
            throw LogError(.invalidArgument, "a log id is \(LogFiles.logIDSize) bytes, not \(identity.logID.count)")
        }
        guard try io("look at \(directory)", { try fileSystem.status(directory) }) == nil else {
            throw LogError(.invalidArgument, "\(directory) exists already; a log is built in a new folder", file: directory)
        }
        self.directory = directory
        self.identity = identity
        self.configuration = configuration
        self.fileSystem = fileSystem
        chain = identity.anchor
        try io("create \(directory)") { try fileSystem.createDirectoryDurably(directory) }
    }

    /// The head after the events added so far.
    public var head: LogHead { LogHead(sequence: nextSequence - 1, hash: writer?.chainAfter ?? chain) }

    /// Adds the next event: its sequence must follow the last one's and its time must not go
    /// back. An erased event is added erased (its digest keeps its place in the chain).
    public mutating func add(_ event: LogEvent) throws {
        precondition(!finished, "the log is finished")
        try event.checkComesNext(after: nextSequence - 1, at: time)
        let micros = event.timestamp.microsecondsSinceEpoch
        if writer == nil {
            writer = try BlockFileWriter(
                directory: directory, firstSequence: nextSequence, timeBefore: time, chainBefore: chain,
                configuration: configuration, fileSystem: fileSystem)
        }
        try writer!.add(event)
        rawInFile += event.payload.count
        time = micros
        nextSequence += 1
        if rawInFile >= configuration.blockSize * Self.blocksPerFile { try closeFile() }
    }

    /// Writes the open block file out, checked and named.
    mutating func closeFile() throws {
        guard var current = writer else { return }
        writer = nil
        do {
            _ = try current.finish(logID: identity.logID, origin: identity.origin, createdAt: configuration.clock.now())
            try current.commit()
        } catch {
            current.abandon()
            throw error
        }
        chain = current.chainAfter
        rawInFile = 0
    }

    /// Writes the last block file and the empty hot-tail segment after it, and returns the
    /// head after the last event.
    public mutating func finish() throws -> LogHead {
        precondition(!finished, "the log is finished")
        try closeFile()
        let header = TailSegmentHeader(
            firstSequence: nextSequence, logID: identity.logID, createdAt: configuration.clock.now(), timeBefore: time,
            chainBefore: chain, origin: identity.origin)
        try TailWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let directory = directory
        try io("sync \(directory)") { try fileSystem.syncDirectory(directory) }
        finished = true
        return LogHead(sequence: nextSequence - 1, hash: chain)
    }

    /// Gives up: everything written is removed, the folder too.
    public func abandon() {
        writer?.abandon()
        try? fileSystem.removeTree(directory)
    }
}

extension LogEvent {
    /// Whether an erased event's stored bytes (digest and what was kept) may have this length.
    public static func isErasedLength(_ length: UInt64) -> Bool { LogFormat.erasedLengths.contains(length) }

    /// Checks that this event, taken from another copy of the log, may come after event `last`
    /// whose time was `time`: the next sequence number, and no earlier time. `note` ends the
    /// refusal's message.
    func checkComesNext(after last: UInt64, at time: Int64, note: String = "") throws {
        guard sequence == last + 1 else {
            throw LogError(.invalidArgument, "event \(sequence) came where event \(last + 1) belongs" + note, sequence: sequence)
        }
        guard timestamp.microsecondsSinceEpoch >= time else {
            throw LogError(.invalidArgument, "event \(sequence)'s time goes back before the event before it" + note, sequence: sequence)
        }
    }
}

extension BlockFileWriter {
    /// Adds an event as another copy of the log holds it: an erased one erased, its digest and
    /// kept bytes in place of the payload.
    mutating func add(_ event: LogEvent) throws {
        let micros = event.timestamp.microsecondsSinceEpoch
        if let digest = event.erasedDigest, let kept = event.keptBytes {
            addErased(digest: Array(digest), kept: Array(kept), at: micros)
        } else {
            try add(event.payload, at: micros)
        }
    }
}
