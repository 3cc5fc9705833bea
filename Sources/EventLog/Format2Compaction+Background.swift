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

    /// Compacts everything before `activeFirst` now, after any compaction in progress.
    func compactNow(before activeFirst: UInt64) throws -> CompactionReport {
        try exclusively {
            try Format2Compaction.compact(
                directory: directory, configuration: configuration, fileSystem: fileSystem, before: activeFirst)
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
            guard let activeFirst = pending, !running else {
                monitor.wait()
                continue
            }
            pending = nil
            running = true
            monitor.unlock()
            // A closing log does not wait for a whole compaction: the one under way stops at
            // its next check, leaving the segments to a later roll's compaction (or `vt compact`).
            let result = Result { try Format2Compaction.compact(
                directory: directory, configuration: configuration, fileSystem: fileSystem, before: activeFirst,
                isCancelled: { self.monitor.withLock { self.stopping } }) }
            monitor.lock()
            running = false
            switch result {
            case .success(let report):
                completed.append(report)
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
