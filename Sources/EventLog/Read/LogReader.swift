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
    /// The log's format, once its first data file exists.
    public private(set) var format: LogFormatVersion?
    /// The format's reading, picked here once the format is known: the one place that does.
    private(set) var reading: (any FormatReading)?
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
        try refresh()
        if format == nil, !(try SegmentFiles.list(directory, fileSystem).foreign.isEmpty) {
            throw LogError(
                .notALog, "\(directory) holds files that are not part of an event log", file: directory)
        }
    }

    /// Lists the directory again, to see files created since; picks the format's reading once
    /// the first data file shows which format the log is in.
    func refresh() throws {
        if reading == nil {
            guard let format = try LogFormatVersion.of(directory: directory, fileSystem: fileSystem) else { return }
            self.format = format
            reading = switch format {
            case .v1: LegacyReading(directory: directory, fileSystem: fileSystem)
            case .v2: BlockTailReading(directory: directory, fileSystem: fileSystem, payloadCodec: payloadCodec)
            }
        }
        try reading?.refresh()
    }

    /// Format 1's reading, for the verifier, repair and upgrade of a format-1 log (nil for a
    /// format-2 log or one with no data file yet).
    var legacy: LegacyReading? { reading as? LegacyReading }

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
        if reading == nil { try refresh() }
        return try reading?.head(at: sequence)
    }

    /// ``head(at:)`` begun now, on another core where the log allows it (format 2, whose heads
    /// are read from the files alone), so that a caller can load something beside it; `value()`
    /// waits for it. A format-1 log's head, or one on a file system whose calls must come in one
    /// order (``FileIO/FileSystem/allowsReadAhead``), is read by this reader when `value()` is
    /// called.
    public func headInBackground(at sequence: UInt64) -> PendingHead {
        if reading == nil { try? refresh() }
        guard let reading else { return PendingHead(givesPositions: false) { try self.head(at: sequence).map { ($0, nil) } } }
        return reading.headInBackground(at: sequence)
    }

    /// The sequence number of the last complete event (0 for an empty log).
    public func lastSequence() throws -> UInt64 {
        try refresh()
        return try reading?.lastSequence() ?? 0
    }

    /// Follows the log: every event from `sequence` on, waiting for new appends as they land
    /// (checking every `pollInterval`). Ends when the task is cancelled.
    public func follow(from sequence: UInt64 = 1, pollInterval: Duration = .milliseconds(20)) -> LogFollower {
        LogFollower(cursor: LogCursor(reader: self, start: .sequence(max(1, sequence)), lastSequence: nil, lastTime: nil),
                    pollInterval: pollInterval)
    }
}
