import Dispatch
import EventLog
import FileIO

/// A snapshot that was found and not used, and why.
public struct SkippedSnapshot: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var reason: String
    public var description: String { "\(file): \(reason)" }
}

/// The `snapshots/` folder of a store: writing, listing, loading and pruning `.snap` files.
///
/// Retention: the log is cut into buckets of `interval` events; the folder keeps the oldest
/// snapshot of each bucket and the newest snapshot overall. So time travel to any sequence
/// starts at most about `interval` events away from a snapshot, while snapshots taken on
/// every close do not pile up.
///
/// Snapshot files are mapped, not read, where the file system can (``MappedFile``): a time
/// travel loads a snapshot every time, and reading one into memory cost a copy and page
/// faults, up to 5 ms of a 30 ms load. The files are never written in place, which makes
/// mapping them safe.
final class SnapshotFolder: Sendable {
    let path: String
    let fileSystem: any FileSystem
    let interval: UInt64

    init(path: String, fileSystem: any FileSystem, interval: UInt64) {
        self.path = path
        self.fileSystem = fileSystem
        self.interval = interval
    }

    /// The sequences of the snapshots present, ascending.
    func sequences() throws -> [UInt64] {
        guard try fileSystem.exists(path) else { return [] }
        return try fileSystem.listDirectory(path).compactMap(SnapshotFile.sequence(in:)).sorted()
    }

    /// Writes a snapshot durably and atomically, then prunes older ones.
    ///
    /// The payload is stored raw (codec 0), not compressed: every open and every `state(at:)`
    /// loads one, and zstd gave back the benchmark store's 20.6 MB at about 0.6 GB/s here,
    /// 30 ms of each load, more than issue 19 allows the whole open. The price is disk: that
    /// snapshot takes 20.6 MB instead of 9.2 MB (docs/BENCHMARKS.md). Compressed snapshots
    /// written before still load.
    func write(_ state: TouristState, head: LogHead) throws {
        let bytes = try SnapshotFile.encode(state, head: head, compressor: nil)
        try fileSystem.createDirectoryDurably(path)
        try fileSystem.writeAtomically(bytes, to: Path.join(path, SnapshotFile.name(for: state.sequence)))
        try prune()
    }

    /// Reads and checks one snapshot (not yet against the log); `pinsOnly` as in
    /// ``SnapshotFile/decode(_:decompressor:pinsOnly:)``.
    func load(_ sequence: UInt64, pinsOnly: Bool = false) throws(SnapshotProblem) -> (SnapshotFile.Header, TouristState) {
        let file = Path.join(path, SnapshotFile.name(for: sequence))
        do {
            // Nothing decoded keeps the bytes (texts are copied out an album at a time), so the
            // mapping can go when the decoding is done.
            if let mapped = try fileSystem.mapForReading(file) {
                return try withExtendedLifetime(mapped) {
                    try SnapshotFile.decode(mapped.bytes, decompressor: ZstdDecompressor(), pinsOnly: pinsOnly)
                }
            }
            let handle = try fileSystem.openFile(file, .readOnly)
            defer { try? handle.close() }
            return try SnapshotFile.decode(try handle.readAll(), decompressor: ZstdDecompressor(), pinsOnly: pinsOnly)
        } catch let problem as SnapshotProblem {
            throw problem
        } catch {
            throw SnapshotProblem("it cannot be read (\(error))")
        }
    }

    /// The newest snapshot at or before `limit` that is sound and belongs to the history the
    /// reader sees, with the ones skipped on the way and why.
    /// `knownHead`, the log's head as its writer holds it, spares the lookup of the head for a
    /// snapshot taken at that point: the usual one at open, taken when the store last closed,
    /// whose lookup in the hot tail hashed the events of the active segment up to it.
    /// `preloaded`, a load of one snapshot made beforehand (``preload()``), is used for that
    /// snapshot instead of loading it again, and checked the same way; `lookedUp`, a lookup of
    /// its head started beside that load, instead of looking it up again.
    func newest(
        atOrBefore limit: UInt64, heads: (UInt64) -> PendingHead, preloaded: Preloaded? = nil, pinsOnly: Bool = false
    ) throws -> (TouristState?, [SkippedSnapshot]) {
        var skipped: [SkippedSnapshot] = []
        for sequence in try sequences().reversed() where sequence <= limit {
            let name = SnapshotFile.name(for: sequence)
            do {
                // The head is looked up beside the load: the file's read and checksum leave the
                // second core idle (docs/BENCHMARKS.md).
                let pendingHead = heads(sequence)
                let header: SnapshotFile.Header, state: TouristState
                if let preloaded, preloaded.sequence == sequence, !pinsOnly {
                    (header, state) = try preloaded.result.get()
                } else {
                    (header, state) = try load(sequence, pinsOnly: pinsOnly)
                }
                guard let head = try pendingHead.value() else {
                    throw SnapshotProblem("the log has no batch ending at sequence \(sequence)")
                }
                guard head.hash.bytes == header.batchHash else {
                    throw SnapshotProblem("it was taken from another history of the log (its batch hash differs)")
                }
                return (state, skipped)
            } catch let problem as SnapshotProblem {
                skipped.append(SkippedSnapshot(file: Path.join(path, name), reason: problem.description))
            }
        }
        return (nil, skipped)
    }

    /// A snapshot loaded ahead of the question it answers, or why it could not be.
    struct Preloaded: Sendable {
        let sequence: UInt64
        let result: Result<(SnapshotFile.Header, TouristState), SnapshotProblem>
    }

    /// A load started by ``preload()``: the snapshot it loads (nil when none), and the wait for
    /// it, which hands the load over once (later waits give nil).
    struct Preloading {
        let sequence: UInt64?
        let wait: () -> Preloaded?
    }

    /// Starts loading the newest snapshot on another thread, before the log it belongs to is
    /// open: a store's open recovers its log (the active hot-tail segment read and hashed, on
    /// one core) and then loads a snapshot (most of it on both), and the two need nothing of
    /// each other until the snapshot's head is checked (docs/BENCHMARKS.md). The result is
    /// nil when there is no snapshot, or when the file system wants its calls in one order.
    func preload() -> Preloading {
        guard fileSystem.allowsReadAhead, let sequence = try? sequences().last else { return Preloading(sequence: nil) { nil } }
        let group = DispatchGroup()
        let box = PreloadBox()
        DispatchQueue.global(qos: .userInitiated).async(group: group) {
            box.value = Preloaded(sequence: sequence, result: Result { () throws(SnapshotProblem) in try self.load(sequence) })
        }
        return Preloading(sequence: sequence) {
            group.wait()
            // Handed over, not kept: a state still held here would be copied whole (its pins
            // and photo references) by the first event replayed onto it.
            defer { box.value = nil }
            return box.value
        }
    }

    /// Written by the loading thread before it leaves the group, read after the wait.
    private final class PreloadBox: @unchecked Sendable {
        var value: Preloaded?
    }

    /// Removes the snapshots bound to another history of the log (after an upgrade, every
    /// format-1 snapshot: they name batch hashes the new log does not have) and returns their
    /// sequences. Snapshots that cannot be read are left for `vt verify` to name.
    func removeForeign(reader: LogReader) throws -> [UInt64] {
        var removed: [UInt64] = try removeOutdated()
        for sequence in try sequences() {
            guard let (header, _) = try? load(sequence) else { continue }
            if let head = try reader.head(at: sequence), head.hash.bytes == header.batchHash { continue }
            try fileSystem.removeFile(Path.join(path, SnapshotFile.name(for: sequence)))
            removed.append(sequence)
        }
        if !removed.isEmpty { try fileSystem.syncDirectory(path) }
        return removed
    }

    /// Removes every snapshot, merged ones too, and returns how many there were.
    func removeAll() throws -> Int {
        let all = try sequences().map(SnapshotFile.name(for:)) + mergedPositions().map(MergedSnapshotFile.name(for:))
        for name in all { try fileSystem.removeFile(Path.join(path, name)) }
        if !all.isEmpty { try fileSystem.syncDirectory(path) }
        return all.count
    }

    /// Removes the snapshots in a format older than this version reads (they are derived data
    /// it can never use: opening replays instead); returns their sequence numbers.
    @discardableResult
    func removeOutdated() throws -> [UInt64] {
        var removed: [UInt64] = []
        for sequence in try sequences() {
            do { _ = try header(of: sequence) } catch where error.isOutdated {
                try fileSystem.removeFile(Path.join(path, SnapshotFile.name(for: sequence)))
                removed.append(sequence)
            } catch {}
        }
        if !removed.isEmpty { try fileSystem.syncDirectory(path) }
        return removed
    }

    /// Keeps the oldest snapshot of each bucket of `interval` events, and the newest.
    func prune() throws {
        for sequence in Self.pruned(try sequences(), interval: interval) {
            try? fileSystem.removeFile(Path.join(path, SnapshotFile.name(for: sequence)))
        }
    }

    /// One snapshot's header, read and checked alone.
    func header(of sequence: UInt64) throws(SnapshotProblem) -> SnapshotFile.Header {
        let name = Path.join(path, SnapshotFile.name(for: sequence))
        var header = [UInt8](repeating: 0, count: SnapshotFile.headerSize)
        do {
            let file = try fileSystem.openFile(name, .readOnly)
            defer { try? file.close() }
            let read = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
            guard read == SnapshotFile.headerSize else { throw SnapshotProblem("it is shorter than a snapshot header") }
        } catch let problem as SnapshotProblem {
            throw problem
        } catch {
            throw SnapshotProblem("it cannot be read (\(error))")
        }
        return try SnapshotFile.decodeHeader(header)
    }
}
