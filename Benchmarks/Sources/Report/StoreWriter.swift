import BenchKit
import EventLog
import Foundation
import TouristWorkload
import VirtualTourist

/// Writes the workload into a store's log, letting the store take a snapshot every `interval`
/// events (it takes one when it opens), so that the store looks like one that was open all
/// along. Used by the store cases and `vt-bench --write-store`.
final class StoreWriter {
    let folder: String
    let storeOptions: StoreOptions
    private(set) var workload: Workload
    /// Applied to every event before it is written (the replication mode gives downloads the
    /// digests of real bytes).
    var transform: (DomainEvent) -> DomainEvent = { $0 }
    private let interval: Int
    private var nextSnapshot: Int
    private var log: EventLog?

    init(folder: String, interval: UInt64, seed: UInt64) throws {
        self.folder = folder
        var options = StoreOptions()
        options.snapshotInterval = interval
        options.collectionInterval = nil
        storeOptions = options
        workload = Workload(seed: seed, livePins: 1_000)
        self.interval = Int(interval)
        nextSnapshot = Int(interval)
    }

    /// Appends whole sessions until at least `count` events, and ends with a snapshot. The
    /// log is closed on return, so the store can be opened.
    func write(upTo count: Int) async throws {
        while workload.events < count {
            for commit in workload.nextSession() {
                _ = try await openLog().append(contentsOf: commit.map { EventCodec.encode(transform($0), cause: nil) })
            }
            if workload.events >= nextSnapshot || workload.events >= count {
                try log?.close()
                log = nil
                try await TouristStore.open(at: folder, options: storeOptions).close()
                nextSnapshot = workload.events + interval
            }
        }
    }

    /// Leaves the log as a store that is open all along has it: its background compaction
    /// turns each hot-tail segment into blocks soon after the segment fills, and the active
    /// segment stays. This writer closes the log every `interval` events for the store's
    /// snapshot, which stops a compaction under way; so the log is opened here, its sealed
    /// segments compacted in the background as an open does, and closed once that is done
    /// (docs/BENCHMARKS-JOURNAL.md, "The harness's store cases on a compacted log").
    func letCompactionCatchUp() throws {
        try log?.close()
        log = nil
        let path = folder + "/log"
        let sealed = try Self.sealedSegments(path) > 0
        let log = try EventLog.open(at: path, configuration: LogConfiguration.touristStore)
        while sealed, log.backgroundCompactions.reports.isEmpty, log.backgroundCompactions.lastError == nil { usleep(2_000) }
        if let error = log.backgroundCompactions.lastError { throw error }
        try log.close()
    }

    /// Appends `count` more events as a running store does (every session synced, so the log
    /// leaves its tail checkpoints as it goes) and, with the log still open, leaves in `image`
    /// what a kill -9 would leave of the store: its files as they are (docs/BENCHMARKS.md,
    /// "Open after a crash"). Returns the workload as of the image.
    func leaveCrashImage(appending count: Int, in image: String) async throws -> Workload {
        let log = try openLog()
        let target = workload.events + count
        while workload.events < target {
            for commit in workload.nextSession() {
                _ = try await log.append(contentsOf: commit.map { EventCodec.encode(transform($0), cause: nil) })
            }
            try await log.sync()
        }
        // A store open all along has compacted its sealed segments soon after each roll: so
        // does this one before the crash (a crash in the moment after a roll finds one more
        // segment to check and compact; not what this case measures).
        while try Self.sealedSegments(folder + "/log") > 0, log.backgroundCompactions.lastError == nil { usleep(2_000) }
        if let error = log.backgroundCompactions.lastError { throw error }
        try Self.copyAsItIs(folder, to: image)
        // Closed, so that its background compaction does not run beside the timed opens.
        try log.close()
        self.log = nil
        return workload
    }

    /// Segments of the log at `log` other than the active one, plus unfinished writes: what a
    /// compaction under way still has to do.
    static func sealedSegments(_ log: String) throws -> Int {
        let names = try FileManager.default.contentsOfDirectory(atPath: log)
        return names.filter { $0.hasSuffix(".seg") }.count - 1 + names.filter { $0.hasSuffix(".tmp") }.count
    }

    /// Copies a store folder, linking the files that are never changed in place (block files,
    /// key summaries, snapshots, photos) and copying the active ones (segments, checkpoints,
    /// the lock).
    static func copyAsItIs(_ source: String, to destination: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: destination, withIntermediateDirectories: true)
        for name in try files.contentsOfDirectory(atPath: source) {
            let from = source + "/" + name, to = destination + "/" + name
            var isDirectory: ObjCBool = false
            _ = files.fileExists(atPath: from, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                try copyAsItIs(from, to: to)
            } else if name.hasSuffix(".seg") || name.hasSuffix(".head") || name.hasSuffix(".tmp") || name == "LOCK" {
                try files.copyItem(atPath: from, toPath: to)
            } else {
                try files.linkItem(atPath: from, toPath: to)
            }
        }
    }

    private func openLog() throws -> EventLog {
        if let log { return log }
        // The store's own key function, so that block files get their summaries as a store's do.
        var configuration = LogConfiguration.touristStore
        configuration.durability = .none
        let opened = try EventLog.open(at: folder + "/log", configuration: configuration)
        log = opened
        return opened
    }
}
