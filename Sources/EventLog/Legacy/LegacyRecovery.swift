import FileIO

/// Recovery of a format-1 log before it is upgraded: check what is on disk, cut a torn tail,
/// rebuild indexes. Runs under the writer's lock. Only the tests write format 1 (fixtures of old
/// logs, `Tests/LegacyLogWriter`); they continue from the ``Tail`` it returns.
///
/// Cost: for each segment, its header, its index, and the bytes from its last index entry to
/// its end (about `indexInterval` plus one batch); for the last segment also its zero tail.
/// It does not grow with the number of events, only with the number of segments.
enum LegacyRecovery {
    /// Where a writer would continue: after the last valid batch of the last segment.
    struct Tail {
        let logID: [UInt8]
        let nextSequence: UInt64
        let lastTimestamp: LogTimestamp?
        let previousHash: ChainHash
        let activeFirstSequence: UInt64
        let dataEnd: Int64
        let indexEntries: [IndexEntry]
    }

    /// Recovers the log in `directory`; the tail is nil when it holds no segment yet.
    static func recover(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> (Tail?, RecoveryReport) {
        var report = RecoveryReport()
        let listing = try SegmentFiles.list(directory, fileSystem)
        guard !listing.segments.isEmpty else {
            guard listing.foreign.isEmpty else {
                let names = listing.foreign.sorted().prefix(5).joined(separator: ", ")
                throw LogError(
                    .notALog,
                    "\(directory) holds files that are not part of an event log (\(names)); use an empty or new directory",
                    file: directory)
            }
            try Quarantine.removeTemporaries(listing.temporaries, directory: directory, fileSystem: fileSystem, report: &report)
            return (nil, report)
        }
        guard listing.segments[0] == 1 else {
            throw LogError(
                .corrupt,
                "the log is damaged: its first segment starts at sequence \(listing.segments[0]), so the segments"
                    + " before it are missing from \(directory)",
                file: directory, sequence: 1)
        }

        // First check every segment, changing nothing; only then cut and rewrite indexes, so a
        // refused open leaves the directory as it was.
        var logID: [UInt8]? = nil
        var previousHash: ChainHash? = nil
        var lastSequence: UInt64 = 0
        var lastTimestamp: LogTimestamp? = nil
        var lastEntries: [IndexEntry] = []
        var lastEnd = Int64(LegacyFormat.segmentHeaderSize)
        var indexesToWrite: [(UInt64, [IndexEntry])] = []
        var tornTail: (SegmentHandle, Damage, UInt64)? = nil
        var handles: [SegmentHandle] = []
        defer { for handle in handles { handle.close() } }
        for (position, firstSequence) in listing.segments.enumerated() {
            let isLast = position == listing.segments.count - 1
            let mode: OpenMode = isLast ? .readWrite : .readOnly
            let segment = try SegmentHandle.open(
                directory: directory, firstSequence: firstSequence, fileSystem: fileSystem, mode: mode, logID: logID)
            handles.append(segment)
            if logID == nil {
                logID = segment.header.logID
                previousHash = ChainHash.of(segment.headerBytes)
            }
            guard firstSequence == lastSequence + 1 else {
                throw LogError(
                    .corrupt,
                    "the log is damaged: \(segment.path) starts at sequence \(firstSequence), but the segment before"
                        + " it ends at \(lastSequence)",
                    file: segment.path, offset: 0, sequence: lastSequence + 1)
            }
            let index = SegmentHandle.loadIndex(directory: directory, firstSequence: firstSequence, fileSystem: fileSystem)
            var tail = try SegmentTail.scan(
                segment, index: index, startHash: previousHash, indexInterval: configuration.indexInterval)
            var meaning = try tail.damage.map { try tail.scanner.classify($0, isLastSegment: isLast) }
            if meaning == .inProgress {
                // No other writer can hold the lock, so this means bytes changed under us: look
                // once more, and treat whatever is still wrong as corruption.
                tail = try SegmentTail.scan(
                    segment, index: index, startHash: previousHash, indexInterval: configuration.indexInterval)
                meaning = try tail.damage.map { try tail.scanner.classify($0, isLastSegment: isLast) }
            }
            if !tail.scannedFromStart, let expected = previousHash {
                try checkFirstLink(of: segment, expected: expected)
            }
            if let damage = tail.damage, let meaning {
                switch meaning {
                case .corruption, .inProgress:
                    throw LogError.corrupt(
                        damage.reason, file: segment.path, offset: damage.offset,
                        sequence: tail.scanner.expectedSequence)
                case .tornTail:
                    tornTail = (segment, damage, tail.scanner.expectedSequence)
                }
            }
            guard tail.lastBatch != nil || isLast else {
                throw LogError(
                    .corrupt, "the log is damaged: \(segment.path) holds no events but is not the last segment",
                    file: segment.path, offset: Int64(LegacyFormat.segmentHeaderSize), sequence: firstSequence)
            }
            if tail.indexNeedsRewrite { indexesToWrite.append((firstSequence, tail.entries)) }
            if let batch = tail.lastBatch {
                lastSequence = batch.lastSequence
                lastTimestamp = batch.lastTimestamp
                previousHash = tail.lastHash
            }
            lastEntries = tail.entries
            lastEnd = tail.end
        }

        try Quarantine.removeTemporaries(listing.temporaries, directory: directory, fileSystem: fileSystem, report: &report)
        if let (segment, damage, firstLost) = tornTail {
            let (bytes, copy) = try Quarantine.cutTornTail(
                of: segment.window, path: segment.path, at: damage.offset, directory: directory, fileSystem: fileSystem)
            report.cutTail = TornTail(
                segment: segment.path, offset: damage.offset, bytes: bytes, events: damage.header.map { Int($0.eventCount) },
                firstLostSequence: firstLost, reason: damage.reason, copy: copy)
        }
        for (firstSequence, entries) in indexesToWrite {
            try writeIndex(entries, firstSequence: firstSequence, directory: directory, fileSystem: fileSystem)
            report.rebuiltIndexes.append(SegmentFiles.name(firstSequence, LogFiles.indexExtension))
        }

        let tail = Tail(
            logID: logID!, nextSequence: lastSequence + 1, lastTimestamp: lastTimestamp, previousHash: previousHash!,
            activeFirstSequence: listing.segments.last!, dataEnd: lastEnd, indexEntries: lastEntries)
        return (tail, report)
    }

    /// The chain link into a segment scanned from an index entry: its first batch must name
    /// the hash of the previous segment's last batch.
    private static func checkFirstLink(of segment: SegmentHandle, expected: ChainHash) throws {
        let scanner = segment.scannerFromStart(previousHash: expected)
        if case .damaged(let damage) = try scanner.next() {
            throw LogError.corrupt(
                damage.reason, file: segment.path, offset: damage.offset, sequence: segment.firstSequence)
        }
    }

    static func writeIndex(
        _ entries: [IndexEntry], firstSequence: UInt64, directory: String, fileSystem: any FileSystem
    ) throws {
        var bytes = IndexFile.header(firstSequence: firstSequence)
        for entry in entries { IndexFile.append(entry, to: &bytes) }
        let path = SegmentFiles.indexPath(directory, firstSequence)
        try io("write the index \(path)") { try fileSystem.writeAtomically(bytes, to: path) }
    }
}
