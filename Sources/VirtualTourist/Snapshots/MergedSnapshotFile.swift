import BlobStore
import FileIO
import EventLog

/// The bytes of a `.msnap` file (docs/FORMAT.md, "Merged snapshot file"): a frontier, then a
/// snapshot file whose batch hash is the frontier's SHA-256, so that a state is never read with
/// another frontier than its own.
enum MergedSnapshotFile {
    static let fileExtension = ".msnap"

    static func encode(_ state: TouristState, frontier: MergedFrontier) throws -> [UInt8] {
        precondition(state.sequence == frontier.position, "a merged snapshot's state is at its frontier's position")
        let section = frontier.encoded()
        let binding = LogHead(sequence: state.sequence, hash: ChainHash(validating: BlobDigest.of(section).bytes)!)
        return section + (try SnapshotFile.encode(state, head: binding, compressor: nil))
    }

    /// Checks and decodes a whole file (`pinsOnly` as for a `.snap`); `accepting` sees the
    /// frontier first and throws to pass over the state unread.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, decompressor: ZstdDecompressor, pinsOnly: Bool = false,
        accepting: (MergedFrontier) throws -> Void = { _ in }
    ) throws -> (MergedFrontier, TouristState) {
        let (frontier, length) = try MergedFrontier.decode(bytes)
        try accepting(frontier)
        let (header, state) = try SnapshotFile.decode(
            UnsafeRawBufferPointer(rebasing: bytes[length...]), decompressor: decompressor, pinsOnly: pinsOnly)
        guard header.batchHash == BlobDigest.of(UnsafeRawBufferPointer(rebasing: bytes[..<length])).bytes else {
            throw SnapshotProblem("its state is not bound to its frontier (the hashes differ)")
        }
        guard header.sequence == frontier.position else {
            throw SnapshotProblem("its state is at position \(header.sequence), its frontier at \(frontier.position)")
        }
        return (frontier, state)
    }

    static func name(for position: UInt64) -> String {
        NumberedFileName.make(position, extension: fileExtension)
    }

    static func position(in name: String) -> UInt64? {
        NumberedFileName.number(in: name, extension: fileExtension)
    }
}
