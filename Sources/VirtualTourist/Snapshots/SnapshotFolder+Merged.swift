import EventLog
import FileIO

/// The merged snapshots of a store of several devices (docs/FORMAT.md, "Merged snapshot file"),
/// kept beside the `.snap` files and pruned the same way: the oldest of each bucket of
/// `interval` positions, and the newest. Which one a store may use is ``MergedHistory``'s
/// question: a snapshot is of use only while it is a prefix of the merged order.
extension SnapshotFolder {
    /// The positions of the merged snapshots present, ascending.
    func mergedPositions() throws -> [UInt64] {
        guard try fileSystem.exists(path) else { return [] }
        return try fileSystem.listDirectory(path).compactMap(MergedSnapshotFile.position(in:)).sorted()
    }

    /// Writes a merged snapshot durably and atomically, then prunes older ones.
    func writeMerged(_ state: TouristState, frontier: MergedFrontier) throws {
        let bytes = try MergedSnapshotFile.encode(state, frontier: frontier)
        try fileSystem.createDirectoryDurably(path)
        try fileSystem.writeAtomically(bytes, to: Path.join(path, MergedSnapshotFile.name(for: state.sequence)))
        let all = try mergedPositions()
        for position in Self.pruned(all, interval: interval) {
            try? fileSystem.removeFile(Path.join(path, MergedSnapshotFile.name(for: position)))
        }
    }

    /// Reads and checks one merged snapshot; `accepting` sees its frontier before its state is
    /// read, and throws (a ``SnapshotProblem``) to pass it over. Other errors of `accepting`
    /// (a log that cannot be read) are thrown as they are.
    func loadMerged(
        _ position: UInt64, pinsOnly: Bool = false, accepting: (MergedFrontier) throws -> Void = { _ in }
    ) throws -> (MergedFrontier, TouristState) {
        let file = Path.join(path, MergedSnapshotFile.name(for: position))
        let result: (MergedFrontier, TouristState)
        do {
            if let mapped = try fileSystem.mapForReading(file) {
                result = try withExtendedLifetime(mapped) {
                    try MergedSnapshotFile.decode(mapped.bytes, decompressor: ZstdDecompressor(), pinsOnly: pinsOnly, accepting: accepting)
                }
            } else {
                let handle = try fileSystem.openFile(file, .readOnly)
                defer { try? handle.close() }
                result = try handle.readAll().withUnsafeBytes { bytes in
                    try MergedSnapshotFile.decode(bytes, decompressor: ZstdDecompressor(), pinsOnly: pinsOnly, accepting: accepting)
                }
            }
        } catch let problem as SnapshotProblem {
            throw problem
        } catch let error as IOError {
            throw SnapshotProblem("it cannot be read (\(error))")
        }
        guard result.1.sequence == position else {
            throw SnapshotProblem("it holds position \(result.1.sequence), not the \(position) its name says")
        }
        return result
    }

    /// The frontier of one merged snapshot, read and checked alone (its state is not read).
    func loadMergedFrontier(_ position: UInt64) throws -> MergedFrontier {
        let file = Path.join(path, MergedSnapshotFile.name(for: position))
        do {
            let handle = try fileSystem.openFile(file, .readOnly)
            defer { try? handle.close() }
            var prefix = [UInt8](repeating: 0, count: 16)
            let read = try prefix.withUnsafeMutableBytes { try handle.read(into: $0, at: 0) }
            guard read == 16 else { throw SnapshotProblem("it is shorter than a frontier's header") }
            let length = 16 + Int(UInt32(littleEndian: prefix.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) }))
            guard Int64(length) <= (try handle.size()) else { throw SnapshotProblem("its frontier's length is impossible") }
            let section = try handle.read(count: length, at: 0)
            let (frontier, _) = try section.withUnsafeBytes { bytes in try MergedFrontier.decode(bytes) }
            guard frontier.position == position else {
                throw SnapshotProblem("its frontier is at position \(frontier.position), not the \(position) its name says")
            }
            return frontier
        } catch let problem as SnapshotProblem {
            throw problem
        } catch let error as IOError {
            throw SnapshotProblem("it cannot be read (\(error))")
        }
    }

    /// Of `positions` (ascending), the ones retention drops: all but the oldest of each bucket
    /// of `interval` and the newest.
    static func pruned(_ positions: [UInt64], interval: UInt64) -> [UInt64] {
        guard let newest = positions.last else { return [] }
        var seenBuckets = Set<UInt64>()
        return positions.filter { position in
            !(seenBuckets.insert(position / interval).inserted || position == newest)
        }
    }
}
