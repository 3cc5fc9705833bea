import BlobStore
import DeviceLogs
import EventLog
import FileIO

/// Long work reports how far it is: (what it is doing, done, in all).
public typealias WorkProgress = (_ phase: String, _ done: Int64, _ total: Int64) -> Void

/// What `vt verify` found: the log's checksums and hash chain, every event decodable and
/// within the rules, each snapshot equal to the replayed state at its sequence, every photo
/// the state shows present (and, when asked, every stored photo matching its digest).
public struct StoreVerification: Sendable {
    public var log = VerificationReport()
    /// Events replayed (and decoded) from the start of the log.
    public var replayedEvents: UInt64 = 0
    public var snapshotsChecked = 0
    public var referencedPhotos = 0
    /// Chunks of `proofs/` roots files compared with their logs (docs/PROOFS.md).
    public var proofChunksChecked = 0
    public var blobs: BlobVerification?
    /// Every problem, in words, with its place.
    public var problems: [String] = []
    /// Things worth knowing that are not damage (a missing index).
    public var notes: [String] = []
    public var isClean: Bool { problems.isEmpty }
}

/// Counts and sizes for `vt stats`.
public struct StoreStatistics: Sendable {
    public var events: UInt64 = 0
    public var eventsByType: [String: UInt64] = [:]
    public var format = LogFormatVersion.v1
    public var segments = 0
    public var batches = 0
    /// Format 2: sealed blocks and hot-tail records, and the bytes each part takes.
    public var blocks = 0
    public var records = 0
    public var blockBytes: Int64 = 0
    public var tailBytes: Int64 = 0
    public var storedBytes: Int64 = 0
    public var rawBytes: Int64 = 0
    public var indexBytes: Int64 = 0
    public var pins = 0
    public var photosShown = 0
    public var blobs = 0
    public var blobBytes: Int64 = 0
    public var referencedBlobs = 0
    public var snapshots: [UInt64] = []
    public var snapshotBytes: Int64 = 0
    public var firstTime: LogTimestamp?
    public var lastTime: LogTimestamp?
    /// Bytes of the format-1 log an upgrade kept in `log.format1/`; nil when there is none.
    public var formerLogBytes: Int64?

    /// Decompressed event bytes over stored bytes.
    public var compressionRatio: Double { storedBytes > 0 ? Double(rawBytes) / Double(storedBytes) : 0 }
}

/// Whole-store checks and counts. Each reads the log twice (the checksum walk, then a decoding
/// replay) and lists the photo and snapshot folders; neither takes a lock nor changes anything,
/// so they can run beside a writer.
public enum StoreAudit {
    public static func verify(
        folder: String, checkPhotoContents: Bool, fileSystem: any FileSystem = PosixFileSystem(), progress: WorkProgress? = nil
    ) throws -> StoreVerification {
        let fileSystem = fileSystem.confined(to: folder)
        var result = StoreVerification()
        let logPath = Path.join(folder, "log")
        let status: FileStatus?
        do { status = try fileSystem.status(logPath) } catch {
            // A folder it may not read is not a folder without a store.
            throw TouristStore.storageError(error, "cannot look into \(folder)")
        }
        guard status?.kind == .directory else {
            throw DomainError(.notAStore, "\(folder) is not a Virtual Tourist store (it has no log/ folder)")
        }
        result.log = try LogVerifier.verify(
            directory: logPath, fileSystem: fileSystem, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec) {
            progress?("checking the log", $0, $1)
        }
        // A missing or stale index only costs speed (readers ignore it; the next writer
        // rebuilds it), so it is a note, not a problem. A key summary that disagrees with its
        // blocks is a problem: `vt history` and the web app's pin history trust it.
        result.notes += result.log.problems.filter { $0.kind == .index }.map { "log: \($0) (rebuilt when the store is next opened for changes)" }
        result.problems += result.log.problems.filter { $0.kind != .index }.map { "log: \($0)" }
        result.notes += result.log.notes.map { "log: \($0)" }
        // Replay what the chain vouches for, up to the first damage.
        let firstDamage = result.log.problems.filter(\.isDamage).compactMap(\.sequence).min()
        let through = min(result.log.lastSequence, firstDamage.map { $0 - 1 } ?? .max)
        let snapshots = SnapshotFolder(path: Path.join(folder, "snapshots"), fileSystem: fileSystem, interval: 1)
        var pendingSnapshots = ((try? snapshots.sequences()) ?? []).filter { $0 <= through }
        var state = TouristState()
        // This device's log alone says nothing of the rules in a store of several devices (its
        // events may be about another device's pins): they are weighed in the merged fold below.
        let severalDevices = (try? StoreDevices.knowsAnother(store: folder, fileSystem: fileSystem)) == true
        do {
            let reader = try LogReader(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
            if through > 0 {
                let cursor = try reader.events(from: 1, through: through)
                while let event = try cursor.next() {
                    let recorded: RecordedEvent
                    do { recorded = try EventCodec.decode(event) } catch {
                        result.problems.append("event \(event.sequence) cannot be decoded: \(error)")
                        break
                    }
                    if !severalDevices, let problem = state.problem(with: recorded.event) {
                        // The fold skips it; a log written by this program never holds one.
                        result.problems.append("event \(event.sequence) (\(recorded.event.typeName)) breaks the rules: \(problem.message)")
                    }
                    state.apply(recorded)
                    result.replayedEvents += 1
                    while let next = pendingSnapshots.first, next <= state.sequence {
                        pendingSnapshots.removeFirst()
                        if next == state.sequence { check(snapshot: next, in: snapshots, against: state, reader: reader, into: &result) }
                    }
                    if event.sequence % 8192 == 0 { progress?("replaying", Int64(event.sequence), Int64(through)) }
                }
            }
        } catch {
            result.problems.append("the log could not be replayed: \(error)")
        }
        progress?("replaying", Int64(through), Int64(through))
        // With other devices' copies, the photos to find are those of the merged state.
        if let merged = verifyDevices(folder: folder, fileSystem: fileSystem, into: &result) { state = merged }
        verifyProofs(folder: folder, fileSystem: fileSystem, into: &result)
        let blobs = try BlobStore(directory: Path.join(folder, "blobs"), fileSystem: fileSystem)
        result.referencedPhotos = state.photoReferences.count
        for digest in state.referencedDigests.sorted(by: { $0.description < $1.description }) where try !blobs.contains(digest) {
            result.problems.append("photo \(digest) is shown in an album but missing from \(blobs.path(of: digest))")
        }
        if checkPhotoContents {
            let verification = try blobs.verify { progress?("hashing photos", Int64($0), Int64($1)) }
            result.blobs = verification
            result.problems += verification.mismatches.map {
                "photo file \($0.path) is damaged: its bytes hash to \($0.actual), not to its name"
            }
        }
        return result
    }

    private static func check(
        snapshot sequence: UInt64, in snapshots: SnapshotFolder, against state: TouristState, reader: LogReader,
        into result: inout StoreVerification
    ) {
        let name = Path.join(snapshots.path, SnapshotFile.name(for: sequence))
        result.snapshotsChecked += 1
        do {
            let (header, saved) = try snapshots.load(sequence)
            guard let head = try reader.head(at: sequence), head.hash.bytes == header.batchHash else {
                result.problems.append("snapshot \(name) belongs to another history of the log (opening skips it)")
                return
            }
            if saved != state { result.problems.append("snapshot \(name) differs from the state replayed to \(sequence)") }
        } catch let problem as SnapshotProblem where problem.isOutdated {
            result.notes.append("snapshot \(name) is in an older format (\(problem)): opening replays the log instead and removes it")
        } catch {
            result.problems.append("snapshot \(name) cannot be used: \(error) (opening skips it)")
        }
    }

    public static func statistics(of reader: StoreReader, progress: WorkProgress? = nil) throws -> StoreStatistics {
        var stats = StoreStatistics()
        let fileSystem = reader.fileSystem
        let logPath = Path.join(reader.folder, "log")
        let report = try LogVerifier.verify(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec) {
            progress?("reading the log", $0, $1)
        }
        stats.format = report.format
        stats.segments = report.segments
        stats.batches = report.batches
        stats.blocks = report.blocks
        stats.records = report.records
        stats.blockBytes = report.blockBytes
        stats.tailBytes = report.tailBytes
        stats.storedBytes = report.storedBytes
        stats.rawBytes = report.rawBytes
        for name in (try? fileSystem.listDirectory(logPath)) ?? [] where name.hasSuffix(".idx") {
            stats.indexBytes += (try? fileSystem.status(Path.join(logPath, name)))??.size ?? 0
        }
        let former = LogUpgrade.formerPath(of: logPath)
        if let names = try? fileSystem.listDirectory(former) {
            stats.formerLogBytes = names.reduce(0) { $0 + (((try? fileSystem.status(Path.join(former, $1)))??.size) ?? 0) }
        }
        var state = TouristState()
        try reader.forEachEvent { recorded in
            stats.events += 1
            stats.eventsByType[recorded.event.typeName, default: 0] += 1
            if stats.firstTime == nil { stats.firstTime = recorded.timestamp }
            stats.lastTime = recorded.timestamp
            state.apply(recorded)
            if stats.events % 8192 == 0 { progress?("counting events", Int64(stats.events), Int64(reader.lastSequence)) }
        }
        stats.pins = state.pins.count
        stats.photosShown = state.pins.values.reduce(0) { $0 + $1.album.slots.count }
        stats.referencedBlobs = state.photoReferences.count
        for blob in try reader.blobStore().storedBlobs() {
            stats.blobs += 1
            stats.blobBytes += (try? fileSystem.status(blob.path))??.size ?? 0
        }
        stats.snapshots = try reader.snapshotSequences()
        for sequence in stats.snapshots {
            stats.snapshotBytes += (try? fileSystem.status(Path.join(reader.snapshots.path, SnapshotFile.name(for: sequence))))??.size ?? 0
        }
        return stats
    }
}
