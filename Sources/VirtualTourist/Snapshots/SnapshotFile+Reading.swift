import EventLog

extension TouristState {
    /// Reads the bytes of one `.snap` file on their own, without a store around them
    /// (docs/FORMAT.md, "Snapshot file"): the state it holds, the sequence it was taken at and
    /// the hash of the batch that ends there. For tools that inspect a snapshot file, and for
    /// the fuzz targets (`Fuzz/`), which must reach the decoder with arbitrary bytes.
    ///
    /// It checks everything opening a store checks in the file itself (header, checksums,
    /// lengths, payload); whether the snapshot belongs to a given log is a separate question:
    /// compare `batchHash` with ``EventLog/LogReader/head(at:)``.
    ///
    /// - Throws: ``DomainError`` `.storage` naming the problem.
    public static func decodeSnapshotFile(
        _ bytes: [UInt8]
    ) throws(DomainError) -> (state: TouristState, sequence: UInt64, batchHash: [UInt8]) {
        do {
            let (header, state) = try SnapshotFile.decode(bytes, decompressor: ZstdDecompressor())
            return (state, header.sequence, header.batchHash)
        } catch {
            throw DomainError(.storage, "the snapshot cannot be used: \(error)")
        }
    }
}
