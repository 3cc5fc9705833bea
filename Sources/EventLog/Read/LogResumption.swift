import FileIO

/// A log opened for an owner that keeps checkpoints of its own state (a store's snapshots, each
/// naming the head it was taken at) and rebuilds that state on open: the heads that check a
/// checkpoint, a cursor over the events after it, and the checks that wait until the owner's
/// replay is done. Everything the hot tail knows that makes this fast stays inside: where the
/// last writer started, the scan a head lookup already made of the active segment, the
/// background check of the tail checkpoint (FORMAT.md, "Tail checkpoint").
///
/// ```swift
/// let resumption = try EventLog.resume(at: path, newestCheckpoint: 12_000)
/// let head = try resumption.head(at: 12_000).value()     // compare with the checkpoint's
/// let cursor = try resumption.events(after: 12_000)       // through the log's last event
/// while let event = try cursor.next() { … }
/// resumption.replayed()                                   // the background checks may start
/// ```
///
/// For one thread: the owner's open.
public final class LogResumption {
    public let log: EventLog
    /// A reader of the log, given the log's payload codec.
    public let reader: LogReader
    /// Where the writer before this one started, when the owner's newest checkpoint lies there:
    /// a clean close takes its checkpoint where the next writer starts.
    private let start: TailPosition?
    /// The head at the newest checkpoint, looked up from open on, beside the owner's load.
    private let lookup: (sequence: UInt64, head: PendingHead)?

    init(log: EventLog, newestCheckpoint: UInt64?) throws {
        self.log = log
        reader = try log.reader()
        let start = log.tailStart.flatMap { $0.sequence == newestCheckpoint ? $0 : nil }
        self.start = start
        // After a crash the newest checkpoint lies before the log's end, and its head is found by
        // hashing the hot tail's events up to it: that starts now, beside the owner's load of
        // the checkpoint, instead of after it (docs/BENCHMARKS-JOURNAL.md, "Open after a crash:
        // the snapshot's head beside its load").
        let reader = reader
        lookup = newestCheckpoint.flatMap { sequence in
            sequence == log.head.sequence || sequence > log.lastSequence || start != nil
                ? nil : (sequence, reader.headInBackground(at: sequence))
        }
    }

    /// The head at `sequence`, to check a checkpoint taken there; ``PendingHead/value()``
    /// waits for it (nil when no event ends there). Known at once for the log's last event and
    /// where the last writer started; else looked up on another core where the log allows it.
    public func head(at sequence: UInt64) -> PendingHead {
        if sequence == log.head.sequence { return .known(log.head) }
        if let start, start.sequence == sequence { return .known(start.head) }
        if let lookup, lookup.sequence == sequence { return lookup.head }
        return reader.headInBackground(at: sequence)
    }

    /// The events after `sequence` through the log's last. The active segment is read from where
    /// the lookup's scan (or the last writer's start) stood, when that is at or before
    /// `sequence`, not again from its first record (docs/BENCHMARKS-JOURNAL.md, "Open after a
    /// crash: one pass over the segment's start").
    public func events(after sequence: UInt64) throws -> LogCursor {
        try reader.events(from: sequence + 1, through: log.lastSequence, startingAt: lookup?.head.tailPosition() ?? start)
    }

    /// The owner's replay is done: the check of the tail checkpoint the log opened from (its
    /// events rehashed) starts now, in the background, rather than beside the load and replay,
    /// and from where the lookup's scan stopped. The first append or the close waits for it.
    public func replayed() {
        log.startTailCheck(from: lookup?.head.tailPosition())
    }
}

extension EventLog {
    /// Opens the log for writing (as ``open(at:configuration:fileSystem:)``) for an owner about
    /// to rebuild its state from its newest checkpoint, taken at `newestCheckpoint` (nil: none).
    public static func resume(
        at directory: String, newestCheckpoint: UInt64?, configuration: LogConfiguration = LogConfiguration(),
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> LogResumption {
        let log = try open(at: directory, configuration: configuration, fileSystem: fileSystem)
        do {
            return try LogResumption(log: log, newestCheckpoint: newestCheckpoint)
        } catch {
            try? log.close()
            throw error
        }
    }
}
