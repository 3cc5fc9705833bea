import EventLog
import FileIO

extension TouristStore {
    /// Upgrades the store's log from format 1 to format 2 (docs/FORMAT.md, "Upgrade from format
    /// 1"), then replaces the format-1 snapshots (they name batch hashes that the new log does
    /// not have, so opening would skip them and replay everything) with one of the state after
    /// the last event. The format-1 log stays in `log.format1/` until the person removes it.
    ///
    /// - Throws: ``DomainError``: `.notAStore`; `.invalidArgument` when the log is already format
    ///   2, holds no events, or an earlier `log.format1/` is in the way; `.storage` when the
    ///   format-1 log does not verify or the disk fails (nothing is changed before the swap).
    public static func upgrade(
        at folder: String, options: StoreOptions = StoreOptions(), fileSystem: any FileSystem = PosixFileSystem(),
        progress: ((UInt64, UInt64) -> Void)? = nil
    ) async throws -> UpgradeReport {
        let fileSystem = fileSystem.confined(to: folder)
        let logPath = Path.join(folder, "log")
        let present = try? fileSystem.status(logPath)
        let former = try? fileSystem.status(LogUpgrade.formerPath(of: logPath))
        guard present != nil || former != nil else {
            throw DomainError(.notAStore, "\(folder) is not a Virtual Tourist store (it has no log/ folder)")
        }
        let report: UpgradeReport
        do {
            report = try LogUpgrade.upgrade(directory: logPath, configuration: options.log.withPinKeys, fileSystem: fileSystem, progress: progress)
        } catch let error as LogError where error.code == .invalidArgument {
            throw DomainError(.invalidArgument, error.message)
        } catch {
            throw storageError(error, "could not upgrade the log of \(folder)")
        }
        do {
            let snapshots = SnapshotFolder(
                path: Path.join(folder, "snapshots"), fileSystem: fileSystem, interval: max(1, options.snapshotInterval))
            _ = try snapshots.removeForeign(reader: try LogReader(directory: logPath, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec))
        } catch {
            throw storageError(error, "could not remove the format-1 snapshots of \(folder)")
        }
        var settings = options
        settings.createIfMissing = false
        settings.collectionInterval = nil
        let store = try await open(at: folder, options: settings, fileSystem: fileSystem)
        do {
            _ = try await store.writeSnapshot()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        return report
    }
}
