@testable import EventLog
import FileIO

/// Format 1's writer, for fixtures of old logs only (the product writes format 2): turns groups
/// of requests into batches on disk. Used by one thread at a time (the group-commit leader);
/// ``EventLog`` guarantees that.
final class LegacyWriter: CommitWriter {
    let directory: String
    let fileSystem: any FileSystem
    let configuration: LogConfiguration
    let logID: [UInt8]
    private(set) var nextSequence: UInt64
    private(set) var lastTimestamp: LogTimestamp?
    private(set) var previousHash: ChainHash
    private var segment: LegacyActiveSegment
    private var builder = BatchBuilder()
    private var output: [UInt8] = []
    private let compressor: ZstdCompressor
    private(set) var hasUnsyncedWrites = false
    /// Set when an I/O failure left the files in a state only a reopen can sort out.
    private(set) var failure: LogError?
    var headHash: ChainHash { previousHash }
    var lastEventTime: LogTimestamp? { lastTimestamp }

    init(
        directory: String, fileSystem: any FileSystem, configuration: LogConfiguration, logID: [UInt8],
        nextSequence: UInt64, lastTimestamp: LogTimestamp?, previousHash: ChainHash, segment: LegacyActiveSegment
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
        if let failure { return group.map { _ in .failure(LegacyWriter.refusal(after: failure)) } }
        builder.reset()
        var round = CommitRound(group, next: nextSequence, last: lastTimestamp, clock: configuration.clock) { payload, time in
            builder.add(payload, at: time)
        }
        _ = round.finish(
            durability: configuration.durability, write: writeBatch, hasUnsyncedWrites: { hasUnsyncedWrites }, sync: sync)
        return round.results
    }

    /// Makes everything written so far durable. A failed sync leaves the page cache in an
    /// unknown state (Linux may drop the dirty pages and forget the error), so the writer
    /// refuses further appends until the log is reopened and recovered from the disk.
    func sync() throws {
        if let failure { throw LegacyWriter.refusal(after: failure) }
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
            segment.dataEnd > Int64(LegacyFormat.segmentHeaderSize)
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
        try LegacyWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let next: LegacyActiveSegment
        do {
            next = try LegacyActiveSegment.open(
                directory: directory, firstSequence: nextSequence, dataEnd: Int64(LegacyFormat.segmentHeaderSize),
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
