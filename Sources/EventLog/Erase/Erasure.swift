import FileIO

/// What one erase did.
public struct ErasureReport: Sendable, Hashable, CustomStringConvertible {
    /// The compaction that moved the hot tail into block files first.
    public var compaction = CompactionReport()
    /// Events whose payload this erase removed, and events asked for that were erased already.
    public var erased: UInt64 = 0
    public var alreadyErased: UInt64 = 0
    /// Block files rewritten, with their bytes before and after.
    public var filesRewritten = 0
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0
    /// Files removed from `quarantine/` (they may hold any payload).
    public var quarantinedFilesRemoved = 0

    public init() {}

    public var description: String {
        "erased \(erased) event\(erased == 1 ? "" : "s")"
            + (alreadyErased > 0 ? " (\(alreadyErased) erased before)" : "")
            + " in \(filesRewritten) block file\(filesRewritten == 1 ? "" : "s") (\(bytesBefore) → \(bytesAfter) bytes)"
            + (quarantinedFilesRemoved > 0 ? "; removed \(quarantinedFilesRemoved) quarantined file(s)" : "")
    }
}

/// Erasure (FORMAT.md, "Erasure: rewriting block files"): each block file holding an event to
/// erase is written again with the same blocks and the same chain, those events reduced to their
/// digests, checked against the old file, and renamed over it. Runs under the writer's lock with
/// no compaction beside it (``Compactor/exclusively(_:)``).
///
/// Memory: one block's events and its compressed form, as compaction.
enum Erasure {
    /// Erases `targets` (sequence → the bytes to keep), which must all be in block files.
    static func erase(
        _ targets: [UInt64: [UInt8]], directory: String, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws -> ErasureReport {
        var report = ErasureReport()
        var listing = LogDirectory(directory: directory, fileSystem: fileSystem)
        try listing.refresh()
        let blockFiles = listing.files.compactMap { file -> (path: String, header: BlockFileHeader)? in
            if case .blocks(let header) = file.kind { return (file.path, header) }
            return nil
        }
        let sequences = targets.keys.sorted()
        let sealedThrough = blockFiles.last?.header.lastSequence ?? 0
        if let last = sequences.last, last > sealedThrough {
            throw LogError(
                .invalidArgument,
                "event \(last) is not in a sealed block (they end at \(sealedThrough)); nothing was erased", sequence: last)
        }
        guard let logID = listing.logID else { return report }
        var next = 0  // both are in order: one walk over the sequences
        for file in blockFiles {
            while next < sequences.count, sequences[next] < file.header.firstSequence { next += 1 }
            guard next < sequences.count, sequences[next] <= file.header.lastSequence else { continue }
            try rewrite(
                file.path, header: file.header, targets: targets, logID: logID, origin: listing.origin,
                directory: directory, configuration: configuration, fileSystem: fileSystem, report: &report)
        }
        report.quarantinedFilesRemoved = try clearQuarantine(directory, fileSystem: fileSystem)
        return report
    }

    /// Steps 2 to 4 for one block file.
    private static func rewrite(
        _ path: String, header: BlockFileHeader, targets: [UInt64: [UInt8]], logID: [UInt8], origin: LogOrigin,
        directory: String, configuration: LogConfiguration, fileSystem: any FileSystem, report: inout ErasureReport
    ) throws {
        let scanner = try BlockFileScanner(path: path, header: header, fileSystem: fileSystem)
        let decompressor = ZstdDecompressor()
        var writer: BlockFileWriter?
        var oldChains: [ChainHash] = []
        var erasedHere: UInt64 = 0, alreadyHere: UInt64 = 0
        do {
            while let (block, _) = try scanner.nextDecoded(decompressor: decompressor, payloadCodec: configuration.payloadCodec) {
                if writer == nil {
                    writer = try BlockFileWriter(
                        directory: directory, firstSequence: header.firstSequence, timeBefore: block.header.timeBefore,
                        chainBefore: block.header.chainBefore, configuration: configuration, fileSystem: fileSystem)
                }
                var events = block.run.makeIterator(firstSequence: block.header.firstSequence)
                while let event = events.next() {
                    let time = event.timestamp.microsecondsSinceEpoch
                    if event.isErased {
                        if targets[event.sequence] != nil { alreadyHere += 1 }
                        writer!.addErased(
                            digest: Array(event.erasedDigest!), kept: Array(event.keptBytes!), at: time)
                    } else if let kept = targets[event.sequence] {
                        erasedHere += 1
                        let digest = event.payload.withUnsafeBytes { EventChain.digest(of: $0) }
                        writer!.addErased(digest: digest, kept: kept, at: time)
                    } else {
                        try writer!.add(event.payload, at: time, flushingWhenFull: false)
                    }
                }
                try writer!.endBlock()
                oldChains.append(block.header.chainAfter)
            }
            guard var finished = writer else { return }
            writer = nil
            // Step 3: the new file must be the old one's twin in everything the chain covers.
            let written = try finished.finish(logID: logID, origin: origin, createdAt: header.createdAt)
            guard written == header, finished.blockChains == oldChains else {
                finished.abandon()
                throw LogError(
                    .corrupt, "rewriting \(path) to erase events gave other blocks or another chain; nothing was changed",
                    file: path, sequence: header.firstSequence)
            }
            guard erasedHere > 0 else {
                finished.abandon()  // only events erased before: the file is already as asked
                report.alreadyErased += alreadyHere
                return
            }
            report.bytesBefore += try io("read the size of \(path)") { try scanner.window.file.size() }
            report.bytesAfter += finished.bytesWritten
            // Step 4: the rename replaces the old file whole.
            try finished.commit()
        } catch {
            writer?.abandon()
            throw error
        }
        report.erased += erasedHere
        report.alreadyErased += alreadyHere
        report.filesRewritten += 1
    }

    /// Step 5: removes every file in `quarantine/`, then syncs it.
    private static func clearQuarantine(_ directory: String, fileSystem: any FileSystem) throws -> Int {
        let folder = Path.join(directory, LogFiles.quarantineDirectoryName)
        guard try io("look at \(folder)", { try fileSystem.exists(folder) }) else { return 0 }
        let names = try io("list \(folder)") { try fileSystem.listDirectory(folder) }
        for name in names {
            let path = Path.join(folder, name)
            try io("remove \(path)") { try fileSystem.removeFile(path) }
        }
        if !names.isEmpty { try io("sync \(folder)") { try fileSystem.syncDirectory(folder) } }
        return names.count
    }
}
