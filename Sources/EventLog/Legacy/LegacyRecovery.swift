import FileIO

/// Opening a log for writing: check what is on disk, cut a torn tail, rebuild indexes, and
/// hand the writer its starting state. Runs under the writer's lock.
///
/// Cost: for each segment, its header, its index, and the bytes from its last index entry to
/// its end (about `indexInterval` plus one batch); for the last segment also its zero tail.
/// It does not grow with the number of events, only with the number of segments.
enum LegacyRecovery {
    static func openWriter(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> (LegacyWriter, RecoveryReport) {
        var report = RecoveryReport()
        let listing = try SegmentFiles.list(directory, fileSystem)
        func removeTemporaries() throws {
            for name in listing.temporaries {
                try io("remove the unfinished write \(name)") { try fileSystem.removeFile(Path.join(directory, name)) }
                report.removedTemporaryFiles.append(name)
            }
        }
        guard !listing.segments.isEmpty else {
            guard listing.foreign.isEmpty else {
                let names = listing.foreign.sorted().prefix(5).joined(separator: ", ")
                throw LogError(
                    .notALog,
                    "\(directory) holds files that are not part of an event log (\(names)); use an empty or new directory",
                    file: directory)
            }
            try removeTemporaries()
            return (try createLog(directory: directory, configuration: configuration, fileSystem: fileSystem), report)
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

        try removeTemporaries()
        if let (segment, damage, firstLost) = tornTail {
            report.cutTail = try cut(
                segment, at: damage.offset, damage: damage, firstLost: firstLost, directory: directory,
                fileSystem: fileSystem)
        }
        for (firstSequence, entries) in indexesToWrite {
            try writeIndex(entries, firstSequence: firstSequence, directory: directory, fileSystem: fileSystem)
            report.rebuiltIndexes.append(SegmentFiles.name(firstSequence, LogFiles.indexExtension))
        }

        let active = try LegacyActiveSegment.open(
            directory: directory, firstSequence: listing.segments.last!, dataEnd: lastEnd, indexEntries: lastEntries,
            fileSystem: fileSystem)
        let writer = try LegacyWriter(
            directory: directory, fileSystem: fileSystem, configuration: configuration, logID: logID!,
            nextSequence: lastSequence + 1, lastTimestamp: lastTimestamp, previousHash: previousHash!,
            segment: active)
        return (writer, report)
    }

    /// A new, empty log: segment 1 with a fresh random log id.
    private static func createLog(
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> LegacyWriter {
        var generator = SystemRandomNumberGenerator()
        let logID = configuration.newLogID
            ?? (0..<LogFiles.logIDSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let header = SegmentHeader(firstSequence: 1, logID: logID, createdAt: configuration.clock.now())
        try LegacyWriter.createSegment(directory: directory, header: header, fileSystem: fileSystem)
        let active = try LegacyActiveSegment.open(
            directory: directory, firstSequence: 1, dataEnd: Int64(LegacyFormat.segmentHeaderSize), indexEntries: [],
            fileSystem: fileSystem)
        return try LegacyWriter(
            directory: directory, fileSystem: fileSystem, configuration: configuration, logID: logID,
            nextSequence: 1, lastTimestamp: nil, previousHash: ChainHash.of(header.encoded()), segment: active)
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

    /// Copies the torn bytes to `quarantine/`, then truncates the segment to the last valid batch.
    private static func cut(
        _ segment: SegmentHandle, at offset: Int64, damage: Damage, firstLost: UInt64, directory: String,
        fileSystem: any FileSystem
    ) throws -> TornTail {
        let file = segment.window.file
        let size = try io("read the size of \(segment.path)") { try file.size() }
        let bytes = try io("read the torn tail of \(segment.path)") {
            try file.read(count: Int(size - offset), at: offset)
        }
        let copy = try Quarantine.keep(
            bytes, named: "\(Path.name(of: segment.path))-\(offset).torn", in: directory, fileSystem: fileSystem)
        try io("cut the torn tail of \(segment.path)") {
            try file.truncate(to: offset)
            try file.sync()
        }
        segment.window.invalidate()
        return TornTail(
            segment: segment.path, offset: offset, bytes: size - offset, events: damage.header.map { Int($0.eventCount) },
            firstLostSequence: firstLost, reason: damage.reason, copy: copy)
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

/// `quarantine/`: where bytes cut from the log are kept for a person to inspect.
enum Quarantine {
    /// Writes `bytes` durably under a name not yet taken and returns the path.
    static func keep(_ bytes: [UInt8], named name: String, in directory: String, fileSystem: any FileSystem) throws -> String {
        let folder = Path.join(directory, LogFiles.quarantineDirectoryName)
        try io("create \(folder)") { try fileSystem.createDirectoryDurably(folder) }
        var path = Path.join(folder, name)
        var attempt = 1
        while try io("look at \(path)", { try fileSystem.exists(path) }) {
            attempt += 1
            path = Path.join(folder, "\(name).\(attempt)")
        }
        try io("keep a copy in \(path)") { try fileSystem.writeAtomically(bytes, to: path) }
        return path
    }
}
