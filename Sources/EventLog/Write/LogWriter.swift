import FileIO

/// One append waiting for (or done by) a group commit.
final class AppendRequest {
    let payloads: [[UInt8]]
    /// Explicit timestamps (import); nil means "the clock's reading when written".
    let timestamps: [LogTimestamp]?
    /// A request with no events that asks for a sync (``EventLog/sync()``, the interval flusher).
    let isSync: Bool
    /// Raw bytes this request adds to a batch, framing included (an upper bound).
    let rawSize: Int
    /// Set by the leader that wrote (or refused) the request, under the group-commit lock.
    var result: Result<Range<UInt64>, LogError>?
    /// An async appender parks here until its request has a result.
    var continuation: CheckedContinuation<Void, Never>?
    /// A request with no events that asks a format-2 writer to seal its active segment (so that
    /// compaction can take everything written so far).
    let isRoll: Bool
    /// Events another copy of the log chained, to be taken as a block file after the last event
    /// (format 2; ``EventLog/appendAsBlock(_:)``). Nil for every other request.
    let sealed: [LogEvent]?
    /// True when a thread is blocked waiting for this request (it can lead itself); false for
    /// async appends and the background syncs, which the writer thread leads.
    var hasBlockedCaller = false

    /// The refusal of an append whose first time is earlier than the log's last event.
    func refusal(startingAt first: LogTimestamp, before last: LogTimestamp) -> LogError {
        timestamps == nil
            ? LogError(
                .clockWentBackwards,
                "the clock reads \(first), earlier than the log's last event (\(last)); nothing was appended."
                    + " Wait until the clock passes that time, or fix the clock")
            : LogError(
                .invalidArgument,
                "the events' timestamps start at \(first), earlier than the log's last event (\(last)); nothing was appended")
    }

    init(payloads: [[UInt8]], timestamps: [LogTimestamp]?, isSync: Bool = false, isRoll: Bool = false) {
        self.payloads = payloads
        self.timestamps = timestamps
        self.isSync = isSync
        self.isRoll = isRoll
        self.sealed = nil
        self.rawSize = payloads.reduce(0) { $0 + $1.count + 2 * LogFormat.maxVarintLength }
    }

    /// A request to take `events` as a block file (they are not payloads of a record).
    init(sealing events: [LogEvent]) {
        payloads = []
        timestamps = nil
        isSync = false
        isRoll = false
        sealed = events
        rawSize = events.reduce(0) { $0 + $1.payload.count }
    }
}

/// The segment being appended to.
struct ActiveSegment {
    let firstSequence: UInt64
    let path: String
    let file: any RandomAccessFile
    /// The end of data: where the next batch goes.
    var dataEnd: Int64
    /// The file's size: `dataEnd` plus any preallocated zeros.
    var allocatedEnd: Int64
    /// Nil once writing the index failed; the next open rebuilds it.
    var index: (any RandomAccessFile)?
    var indexEnd: Int64
    var lastIndexedOffset: Int64?

    /// Opens a segment for appending at `dataEnd`. Its index file must hold `indexEntries`.
    static func open(
        directory: String, firstSequence: UInt64, dataEnd: Int64, indexEntries: [IndexEntry],
        fileSystem: any FileSystem
    ) throws -> ActiveSegment {
        let path = SegmentFiles.segmentPath(directory, firstSequence)
        let file = try io("open the segment \(path) for writing") { try fileSystem.openFile(path, .readWrite) }
        let size = try io("read the size of \(path)") { try file.size() }
        let indexPath = SegmentFiles.indexPath(directory, firstSequence)
        let index = try? fileSystem.openFile(indexPath, .readWrite)
        return ActiveSegment(
            firstSequence: firstSequence, path: path, file: file, dataEnd: dataEnd, allocatedEnd: size,
            index: index,
            indexEnd: Int64(LogFormat.indexHeaderSize + indexEntries.count * LogFormat.indexEntrySize),
            lastIndexedOffset: indexEntries.last?.offset)
    }
}

/// The writer: turns groups of requests into batches on disk. Used by one thread at a time
/// (the group-commit leader); ``EventLog`` guarantees that.
final class LogWriter {
    let directory: String
    let fileSystem: any FileSystem
    let configuration: LogConfiguration
    let logID: [UInt8]
    private(set) var nextSequence: UInt64
    private(set) var lastTimestamp: LogTimestamp?
    private(set) var previousHash: ChainHash
    private var segment: ActiveSegment
    private var builder = BatchBuilder()
    private var output: [UInt8] = []
    private let compressor: ZstdCompressor
    private(set) var hasUnsyncedWrites = false
    /// Set when an I/O failure left the files in a state only a reopen can sort out.
    private(set) var failure: LogError?

    init(
        directory: String, fileSystem: any FileSystem, configuration: LogConfiguration, logID: [UInt8],
        nextSequence: UInt64, lastTimestamp: LogTimestamp?, previousHash: ChainHash, segment: ActiveSegment
    ) throws {
        self.directory = directory
        self.fileSystem = fileSystem
        self.configuration = configuration
        self.logID = logID
        self.nextSequence = nextSequence
        self.lastTimestamp = lastTimestamp
        self.previousHash = previousHash
        self.segment = segment
        self.compressor = try ZstdCompressor(level: configuration.compressionLevel)
    }

    /// Writes a group of requests as one batch, syncs as the policy says, and returns each
    /// request's result, in order. Requests refused on their own (a clock that went backwards)
    /// do not stop the others.
    func commit(_ group: [AppendRequest]) -> [Result<Range<UInt64>, LogError>] {
        if let failure { return group.map { _ in .failure(LogWriter.refusal(after: failure)) } }
        builder.reset()
        var results: [Result<Range<UInt64>, LogError>] = []
        results.reserveCapacity(group.count)
        var sequence = nextSequence
        var last = lastTimestamp
        var written: [Int] = []
        var wantsSync = false
        let now = group.contains { !$0.payloads.isEmpty && $0.timestamps == nil } ? configuration.clock.now() : nil
        for (position, request) in group.enumerated() {
            if request.payloads.isEmpty {
                wantsSync = wantsSync || request.isSync
                results.append(.success(sequence..<sequence))
                continue
            }
            let first = request.timestamps?.first ?? now!
            if let last, first < last {
                results.append(.failure(request.refusal(startingAt: first, before: last)))
                continue
            }
            for (index, payload) in request.payloads.enumerated() {
                builder.add(payload, at: request.timestamps?[index] ?? now!)
            }
            let count = UInt64(request.payloads.count)
            results.append(.success(sequence..<sequence + count))
            sequence += count
            last = request.timestamps?.last ?? now!
            written.append(position)
        }
        if !written.isEmpty {
            do {
                try writeBatch()
            } catch {
                let failure = error as? LogError ?? LogError(.io, "cannot append", cause: error)
                for position in written { results[position] = .failure(failure) }
                return results
            }
            if configuration.durability == .always { wantsSync = true }
        }
        if wantsSync, hasUnsyncedWrites {
            do {
                try sync()
            } catch {
                let failure = error as? LogError ?? LogError(.writerFailed, "cannot sync")
                for position in results.indices where (try? results[position].get()) != nil {
                    results[position] = .failure(failure)
                }
            }
        }
        return results
    }

    /// Makes everything written so far durable. A failed sync leaves the page cache in an
    /// unknown state (Linux may drop the dirty pages and forget the error), so the writer
    /// refuses further appends until the log is reopened and recovered from the disk.
    func sync() throws {
        if let failure { throw LogWriter.refusal(after: failure) }
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

    /// Seals the active segment (no zero tail, synced) and releases the files.
    func close() throws {
        defer {
            try? segment.index?.close()
            try? segment.file.close()
        }
        guard failure == nil else { return }
        try io("trim the preallocated tail of \(segment.path)") { try segment.file.truncate(to: segment.dataEnd) }
        try sync()
    }

    private static func refusal(after failure: LogError) -> LogError {
        LogError(.writerFailed, "the log refuses appends after an earlier failure; reopen it", cause: failure)
    }

    private func writeBatch() throws {
        output.removeAll(keepingCapacity: true)
        let header = builder.encode(
            firstSequence: nextSequence, previousHash: previousHash, compressor: compressor, into: &output)
        if segment.dataEnd >= Int64(configuration.segmentSize),
            segment.dataEnd > Int64(LogFormat.segmentHeaderSize)
        {
            try roll()
        }
        let offset = segment.dataEnd
        let end = offset + Int64(output.count)
        try preallocate(upTo: end)
        do {
            try segment.file.write(output, at: offset)
        } catch let error as IOError {
            // Never leave part of a batch behind: put the file back as it was.
            do {
                try segment.file.truncate(to: offset)
                segment.allocatedEnd = offset
            } catch {
                failure = LogError(
                    .writerFailed, "a failed append could not be undone in \(segment.path); reopen the log",
                    file: segment.path, offset: offset, cause: error as? IOError)
            }
            throw LogError.io(error, "append to \(segment.path)")
        }
        segment.dataEnd = end
        segment.allocatedEnd = max(segment.allocatedEnd, end)
        nextSequence = header.lastSequence + 1
        lastTimestamp = header.lastTimestamp
        previousHash = ChainHash.of(output)
        hasUnsyncedWrites = true
        addIndexEntry(for: header, at: offset)
    }

    /// Starts the next segment. The current one is sealed first (zero tail cut, synced), so a
    /// crash can tear only the last segment (FORMAT.md, "Recovery and damage").
    private func roll() throws {
        try io("seal the segment \(segment.path)") { try segment.file.truncate(to: segment.dataEnd) }
        segment.allocatedEnd = segment.dataEnd
        if hasUnsyncedWrites { try sync() }
        let header = SegmentHeader(firstSequence: nextSequence, logID: logID, createdAt: configuration.clock.now())
        // If this fails the sealed segment simply stays active: it can take more appends.
        try LogWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let next: ActiveSegment
        do {
            next = try ActiveSegment.open(
                directory: directory, firstSequence: nextSequence, dataEnd: Int64(LogFormat.segmentHeaderSize),
                indexEntries: [], fileSystem: fileSystem)
        } catch let error as LogError {
            failure = LogError(.writerFailed, "the new segment could not be opened; reopen the log", cause: error)
            throw error
        }
        try? segment.index?.close()
        try? segment.file.close()
        segment = next
    }

    /// Writes a new segment's header and an empty index: the header durably and atomically
    /// (temporary file, sync, rename, sync the directory), the index without syncing (derived).
    static func createSegment(directory: String, header: SegmentHeader, fileSystem: any FileSystem) throws {
        let path = SegmentFiles.segmentPath(directory, header.firstSequence)
        try io("create the segment \(path)") { try fileSystem.writeAtomically(header.encoded(), to: path) }
        let indexPath = SegmentFiles.indexPath(directory, header.firstSequence)
        if let index = try? fileSystem.openFile(indexPath, .createOrTruncate) {
            try? index.write(IndexFile.header(firstSequence: header.firstSequence), at: 0)
            try? index.close()
        }
    }

    /// Extends the zero tail so that the next write lands on allocated blocks.
    private func preallocate(upTo end: Int64) throws {
        guard configuration.preallocates else { return }
        segment.allocatedEnd = try ZeroTail.extend(
            segment.file, path: segment.path, from: segment.allocatedEnd, toCover: end, chunk: configuration.preallocationSize)
    }

    private func addIndexEntry(for header: BatchHeader, at offset: Int64) {
        if let last = segment.lastIndexedOffset, offset - last < Int64(configuration.indexInterval) { return }
        segment.lastIndexedOffset = offset
        guard let index = segment.index else { return }
        var bytes: [UInt8] = []
        IndexFile.append(
            IndexEntry(sequence: header.firstSequence, timestamp: header.firstTimestamp, offset: offset), to: &bytes)
        do {
            try index.write(bytes, at: segment.indexEnd)
            segment.indexEnd += Int64(bytes.count)
        } catch {
            // The index is derived data: stop maintaining it; the next open rebuilds it.
            try? index.close()
            segment.index = nil
        }
    }
}

/// The zeros a writer keeps ahead of the data (FORMAT.md, "Zero tail"), shared by both formats.
enum ZeroTail {
    private static let zeros = [UInt8](repeating: 0, count: 256 << 10)

    /// Writes zeros from `allocatedEnd` up to the next multiple of `chunk` that covers `end`,
    /// and returns the new allocated end (unchanged when `end` is already covered). On failure
    /// the file is cut back to `allocatedEnd`.
    static func extend(
        _ file: any RandomAccessFile, path: String, from allocatedEnd: Int64, toCover end: Int64, chunk: Int
    ) throws -> Int64 {
        guard end > allocatedEnd else { return allocatedEnd }
        let size = Int64(chunk)
        let target = (end + size - 1) / size * size
        var position = allocatedEnd
        do {
            while position < target {
                let count = Int(min(Int64(zeros.count), target - position))
                try zeros.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: position) }
                position += Int64(count)
            }
        } catch let error as IOError {
            try? file.truncate(to: allocatedEnd)
            throw LogError.io(error, "extend \(path)")
        }
        return target
    }
}
