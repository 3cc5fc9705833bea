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
    /// (docs/BENCHMARKS.md, "The harness's store cases on a compacted log").
    func letCompactionCatchUp() throws {
        try log?.close()
        log = nil
        let path = folder + "/log"
        let sealed = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.count > 1
        let log = try EventLog.open(at: path, configuration: LogConfiguration().withPinKeys)
        while sealed, log.backgroundCompactions.reports.isEmpty, log.backgroundCompactions.lastError == nil { usleep(2_000) }
        if let error = log.backgroundCompactions.lastError { throw error }
        try log.close()
    }

    private func openLog() throws -> EventLog {
        if let log { return log }
        // The store's own key function, so that block files get their summaries as a store's do.
        var configuration = LogConfiguration().withPinKeys
        configuration.durability = .none
        let opened = try EventLog.open(at: folder + "/log", configuration: configuration)
        log = opened
        return opened
    }
}
