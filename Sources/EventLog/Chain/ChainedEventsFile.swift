import FileIO

/// Events another copy of a log already chained — a replica's batch, erased events included —
/// written as one block file after the log's last event, by the swap protocol's writer: synced,
/// read back, rehashed, then named (FORMAT.md, "Taking chained events as a block file", steps 2
/// and 3). The writer's lock is held by the caller.
enum ChainedEventsFile {
    struct Written {
        /// The head after the last event written.
        var head: LogHead
        /// The last event's time, microseconds since 1970.
        var lastTime: Int64
    }

    /// Writes `<after.sequence + 1>.blk`. Every event is checked before anything is named: it
    /// must follow the one before (the first, `after`), and its time must not go back past
    /// `timeBefore` or the event before it. On any failure the temporary file is removed.
    static func write(
        _ events: [LogEvent], directory: String, after: LogHead, timeBefore: Int64, logID: [UInt8], origin: LogOrigin,
        configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> Written {
        guard !events.isEmpty else { throw LogError(.invalidArgument, "there are no events to take as a block file") }
        var last = after.sequence
        var time = timeBefore
        for event in events {
            try event.checkComesNext(after: last, at: time, note: "; nothing was appended")
            last = event.sequence
            time = event.timestamp.microsecondsSinceEpoch
        }
        var writer = try BlockFileWriter(
            directory: directory, firstSequence: after.sequence + 1, timeBefore: timeBefore, chainBefore: after.hash,
            configuration: configuration, fileSystem: fileSystem)
        do {
            for event in events { try writer.add(event) }
            _ = try writer.finish(logID: logID, origin: origin, createdAt: configuration.clock.now())
            try writer.commit()
        } catch {
            writer.abandon()
            throw error
        }
        return Written(head: LogHead(sequence: last, hash: writer.chainAfter), lastTime: time)
    }
}
