import FileIO
import Foundation

/// Runs compactions for one open format-2 log: in the background after each roll (on a thread
/// of its own, so an append never waits for one), or at once when asked (``EventLog/compact()``).
/// One compaction at a time. A background failure is kept (``lastError``) and the next roll
/// tries again; the segments stay as they were.
final class Compactor: @unchecked Sendable {
    private let directory: String
    private let configuration: LogConfiguration
    private let fileSystem: any FileSystem
    private let monitor = Monitor()
    /// The active segment's first sequence at the last roll not yet compacted.
    private var pending: UInt64?
    /// Whether the key summaries the log lacks are to be built (after any compaction).
    private var summariesWanted = false
    private var running = false
    private var stopping = false
    private var thread: Thread?
    private let threadExited = DispatchSemaphore(value: 0)
    private var lastFailure: LogError?
    private var completed: [CompactionReport] = []

    init(directory: String, configuration: LogConfiguration, fileSystem: any FileSystem) {
        self.directory = directory
        self.configuration = configuration
        self.fileSystem = fileSystem
        guard configuration.compactsInBackground else { return }
        let thread = Thread { [self] in run() }
        thread.name = "EventLog compactor"
        self.thread = thread
        thread.start()
    }

    var lastError: LogError? { monitor.withLock { lastFailure } }
    var reports: [CompactionReport] { monitor.withLock { completed } }

    /// Everything before `activeFirst` is sealed: compact it in the background.
    func schedule(before activeFirst: UInt64) {
        monitor.withLock {
            guard thread != nil, !stopping else { return }
            pending = max(pending ?? 0, activeFirst)
            monitor.broadcast()
        }
    }

    /// Builds the key summaries the log lacks in the background, once nothing waits to be
    /// compacted (a compaction writes its own file's summary).
    func scheduleKeySummaries() {
        monitor.withLock {
            guard thread != nil, !stopping, configuration.blockKeys != nil else { return }
            summariesWanted = true
            monitor.broadcast()
        }
    }

    /// Builds the key summaries the log lacks now, after any compaction in progress; nothing
    /// without a key function.
    func buildKeySummariesNow() throws -> Int {
        guard let keys = configuration.blockKeys else { return 0 }
        return try exclusively { try KeySummaryBuilding.buildMissing(
                directory: directory, keys: keys, payloadCodec: configuration.payloadCodec, fileSystem: fileSystem) }
    }

    /// Compacts everything before `activeFirst` now, after any compaction in progress, then
    /// builds the key summaries the log lacks.
    func compactNow(before activeFirst: UInt64) throws -> CompactionReport {
        try exclusively {
            var report = try Compaction.compact(
                directory: directory, configuration: configuration, fileSystem: fileSystem, before: activeFirst)
            if let keys = configuration.blockKeys {
                report.keySummariesBuilt = try KeySummaryBuilding.buildMissing(
                directory: directory, keys: keys, payloadCodec: configuration.payloadCodec, fileSystem: fileSystem)
            }
            return report
        }
    }

    /// Runs `body` when no compaction is running, and keeps any from starting until it ends
    /// (an erase rewrites block files that a compaction would otherwise be writing beside).
    func exclusively<T>(_ body: () throws -> T) throws -> T {
        monitor.lock()
        while running { monitor.wait() }
        running = true
        monitor.unlock()
        defer {
            monitor.withLock {
                running = false
                monitor.broadcast()
            }
        }
        return try body()
    }

    /// Waits until nothing is scheduled or running: returns at once without a background
    /// thread, and when the log is closing.
    func waitUntilIdle() {
        monitor.lock()
        while thread != nil, !stopping, running || pending != nil || summariesWanted { monitor.wait() }
        monitor.unlock()
    }

    /// Stops the thread, and a compaction in progress at its next check (within a few
    /// thousand events), leaving the segments as they were.
    func stop() {
        monitor.lock()
        guard thread != nil, !stopping else {
            monitor.unlock()
            return
        }
        stopping = true
        monitor.broadcast()
        monitor.unlock()
        threadExited.wait()
        thread = nil
    }

    private func run() {
        monitor.lock()
        while true {
            if stopping { break }
            guard !running, pending != nil || summariesWanted else {
                monitor.wait()
                continue
            }
            let activeFirst = pending
            pending = nil
            if activeFirst == nil { summariesWanted = false }
            running = true
            monitor.unlock()
            // A closing log does not wait for a whole compaction: the one under way stops at
            // its next check, leaving the segments to a later roll's compaction (or `vt compact`).
            // A summary build stops the same way, keeping the files it finished.
            let isCancelled = { self.monitor.withLock { self.stopping } }
            let result = Result { () throws -> CompactionReport? in
                if let activeFirst {
                    return try Compaction.compact(
                        directory: directory, configuration: configuration, fileSystem: fileSystem, before: activeFirst,
                        isCancelled: isCancelled)
                }
                if let keys = configuration.blockKeys {
                    _ = try KeySummaryBuilding.buildMissing(
                        directory: directory, keys: keys, payloadCodec: configuration.payloadCodec, fileSystem: fileSystem,
                        isCancelled: isCancelled)
                }
                return nil
            }
            monitor.lock()
            running = false
            switch result {
            case .success(let report):
                if let report { completed.append(report) }
                lastFailure = nil
            case .failure(let error) where error is CompactionCancelled:
                break  // the log is closing; nothing was changed, and nothing failed
            case .failure(let error):
                lastFailure = error as? LogError ?? LogError(.io, "compaction failed", cause: error)
            }
            monitor.broadcast()
        }
        monitor.unlock()
        threadExited.signal()
    }
}
