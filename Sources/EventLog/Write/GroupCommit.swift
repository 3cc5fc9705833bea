import Foundation

/// The serialized core behind ``EventLog``: the queue of appends, group commit, and the log's
/// writer thread.
///
/// Group commit: appends queue up; one *leader* takes everything queued (up to a batch's
/// worth), writes it as one batch, syncs once, and hands the results back. A blocking caller
/// that finds no leader at work leads itself, on its own thread, so a lone appender pays no
/// thread hop. Async callers never lead: they suspend, and the writer thread leads for them, so
/// an `fsync` never blocks a thread of Swift's cooperative pool and their sharing of syncs does
/// not depend on the pool being free. The writer thread also runs the `.interval` syncs.
///
/// Prepared appends (a store's actions) are decided by the leader too: when their turn comes it
/// gives each the sequence number and time its events get, takes what it makes of them while they
/// fit in the record, and tells its settler how the record ended, before any of them returns. A
/// group is either plain appends or prepared ones (with syncs and rolls), so that a plain append
/// the writer refuses never moves the numbers a prepared one was given.
///
/// Invariants (under `monitor`): at most one leader (`leaderActive`); only the leader touches
/// `writer` and calls preparers and settlers; a request's `result` is set exactly once, before
/// its waiter is released.
final class GroupCommit: @unchecked Sendable {
    let writer: any CommitWriter
    private let maxBatchSize: Int
    private let maxEventSize: Int
    /// The one settler of the log's prepared appends, once one came.
    private var settler: ObjectIdentifier?
    private let syncInterval: Duration?
    private let clock: any LogClock
    /// Kept while the log is open when the clock is a stepped one: its moves wake the writer
    /// thread, which then sleeps without a timeout.
    private var clockWatch: AnyObject?
    private let monitor = Monitor()
    private var queue: [AppendRequest] = []
    private var leaderActive = false
    private var stopping = false
    private var appendedThrough: UInt64
    private var headHash: ChainHash
    private var lastTime: LogTimestamp?
    private var unsynced = false
    /// Blocking callers asleep in ``submit(_:)-(AppendRequest)``: a finished group wakes the
    /// monitor only when someone is there to wake (see ``lead()``).
    private var sleepingCallers = 0
    private var thread: Thread?
    /// Tests: callers of ``queued(reach:)`` waiting for the queue to hold so many requests.
    private var queueWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private let threadExited = DispatchSemaphore(value: 0)

    init(writer: any CommitWriter, configuration: LogConfiguration) {
        self.writer = writer
        self.maxBatchSize = configuration.maxBatchSize
        self.maxEventSize = configuration.maxEventSize
        if case .interval(let interval) = configuration.durability { syncInterval = interval } else { syncInterval = nil }
        self.clock = configuration.clock
        self.appendedThrough = writer.nextSequence - 1
        self.headHash = writer.headHash
        self.lastTime = writer.lastEventTime
        if syncInterval != nil, let stepped = configuration.clock as? any SteppedLogClock {
            let monitor = self.monitor
            clockWatch = stepped.whenMoved { monitor.withLock { monitor.broadcast() } }
        }
        let thread = Thread { [self] in run() }
        thread.name = "EventLog writer"
        self.thread = thread
        thread.start()
    }

    var lastSequence: UInt64 { monitor.withLock { appendedThrough } }

    var head: LogHead { monitor.withLock { LogHead(sequence: appendedThrough, hash: headHash) } }

    var lastTimestamp: LogTimestamp? { monitor.withLock { lastTime } }

    /// Queues a request and blocks the calling thread until it is written; leads the group
    /// itself when no leader is at work and it is first in line.
    func submit(_ request: AppendRequest) throws -> Range<UInt64> {
        monitor.lock()
        guard !stopping else {
            monitor.unlock()
            throw LogError(.closed, "the log at \(writer.directory) is closed")
        }
        request.hasBlockedCaller = true
        queue.append(request)
        while request.result == nil {
            if !leaderActive, queue.first === request {
                lead()
            } else {
                sleepingCallers += 1
                monitor.wait()
                sleepingCallers -= 1
            }
        }
        monitor.unlock()
        return try request.result!.get()
    }

    /// Queues a request and suspends until the writer thread (or a blocking leader) wrote it.
    func submit(_ request: AppendRequest) async throws -> Range<UInt64> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            monitor.lock()
            if stopping {
                request.result = .failure(LogError(.closed, "the log at \(writer.directory) is closed"))
                monitor.unlock()
                continuation.resume()
                return
            }
            if let other = request.settler.map(ObjectIdentifier.init) {
                if settler == nil { settler = other }
                guard settler == other else {
                    request.result = .failure(LogError(
                        .invalidArgument, "the log at \(writer.directory) already has another preparing appender"))
                    monitor.unlock()
                    continuation.resume()
                    return
                }
            }
            request.continuation = continuation
            queue.append(request)
            monitor.broadcast()
            let due = queueReached()
            monitor.unlock()
            for watcher in due { watcher.resume() }
        }
        return try request.result!.get()
    }

    /// Tests: returns once `count` async appends wait in the queue (a leader at work holds them
    /// there), so a test can make them share a group; at once when the log closes.
    func queued(reach count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            monitor.lock()
            let now = queue.count >= count || stopping
            if !now { queueWatchers.append((count, continuation)) }
            monitor.unlock()
            if now { continuation.resume() }
        }
    }

    /// The watchers of ``queued(reach:)`` whose count the queue reached (or all, when closing);
    /// called with the monitor locked.
    private func queueReached() -> [CheckedContinuation<Void, Never>] {
        let due = queueWatchers.filter { stopping || $0.count <= queue.count }.map(\.continuation)
        if !due.isEmpty { queueWatchers.removeAll { stopping || $0.count <= queue.count } }
        return due
    }

    /// Waits for queued appends to be written, stops the writer thread, and closes the writer.
    func close() throws {
        monitor.lock()
        if stopping {
            monitor.unlock()
            return
        }
        stopping = true
        monitor.broadcast()
        let watchers = queueReached()
        monitor.unlock()
        for watcher in watchers { watcher.resume() }
        threadExited.wait()
        // The thread's closure holds self: dropping the thread breaks that cycle, or every
        // closed log would keep its writer, buffers and zstd context alive.
        thread = nil
        clockWatch = nil
        try writer.close()
    }

    /// Writes the front of the queue as one batch. Called with the monitor locked and no leader
    /// at work; returns with the monitor locked. The I/O runs unlocked, so appends keep queueing
    /// meanwhile; results are published under the lock before any waiter is released.
    private func lead() {
        leaderActive = true
        var group: [AppendRequest] = []
        var size = 0
        var prepared: Bool? = nil
        while let next = queue.first, group.isEmpty || size + next.rawSize <= maxBatchSize {
            if !next.takesNoEvents {
                let kind = next.prepare != nil
                guard prepared == nil || prepared == kind else { break }
                prepared = kind
            }
            group.append(queue.removeFirst())
            size += next.rawSize
        }
        monitor.unlock()
        var waitingTurn: [AppendRequest] = []
        var settlers: [any CommitSettler] = []
        if prepared == true { (waitingTurn, settlers) = prepare(&group) }
        var results = writer.commit(group)
        for (position, request) in group.enumerated() {
            if let refusal = request.refusal { results[position] = .failure(refusal) }
        }
        if !settlers.isEmpty {
            // Every accepted request of the group is in the one record: they share its fate.
            let failure = zip(group, results).lazy.filter { $0.0.prepare != nil && $0.0.refusal == nil }
                .compactMap { if case .failure(let error) = $0.1 { error } else { nil } }.first
            let outcome = failure.map { Result<LogHead, LogError>.failure($0) }
                ?? .success(LogHead(sequence: writer.nextSequence - 1, hash: writer.headHash))
            for settler in settlers { settler.settle(outcome) }
        }
        monitor.lock()
        queue.insert(contentsOf: waitingTurn, at: 0)
        var waiting: [CheckedContinuation<Void, Never>] = []
        for (request, result) in zip(group, results) {
            request.result = result
            if let continuation = request.continuation {
                waiting.append(continuation)
                request.continuation = nil
            }
        }
        appendedThrough = writer.nextSequence - 1
        headHash = writer.headHash
        lastTime = writer.lastEventTime
        unsynced = writer.hasUnsyncedWrites
        leaderActive = false
        // A lone blocking appender is both leader and only waiter: a broadcast would only wake
        // the writer thread to find nothing to do, a context switch on every durable commit.
        // Wake when a blocked caller waits for its result or its turn, or when the writer
        // thread has async requests (or a close) to lead.
        if sleepingCallers > 0 || stopping || queue.contains(where: { !$0.hasBlockedCaller }) {
            monitor.broadcast()
        }
        monitor.unlock()
        for continuation in waiting { continuation.resume() }
        monitor.lock()
    }

    /// Prepares the group's prepared requests in order, each at the sequence number after the
    /// ones before it and at one time for all (the clock's, never before the last event's). A
    /// request whose events do not fit in what is left of the record waits, with every request
    /// after it, for the next group (returned, to go back to the front of the queue); events
    /// too large for any record are refused. Returns those and the settlers of what was taken.
    private func prepare(_ group: inout [AppendRequest]) -> (waitingTurn: [AppendRequest], settlers: [any CommitSettler]) {
        // A writer that failed refuses the whole group: nothing is prepared for numbers that may
        // already be taken (a failed sync leaves its events' fate to the next open).
        guard writer.failure == nil else { return ([], []) }
        var sequence = writer.nextSequence
        let last = writer.lastEventTime ?? LogTimestamp(microsecondsSinceEpoch: .min)
        let time = max(clock.now(), last)
        var room = maxBatchSize
        var settlers: [any CommitSettler] = []
        for (position, request) in group.enumerated() {
            guard let prepare = request.prepare else { continue }
            let events = prepare(CommitSlot(firstSequence: sequence, time: time))
            let size = AppendRequest.rawSize(of: events.payloads)
            if let large = events.payloads.first(where: { $0.count > maxEventSize }) {
                request.refusal = LogError(
                    .eventTooLarge, "a prepared event is \(large.count) bytes; the limit is \(maxEventSize)")
                continue
            }
            guard size <= maxBatchSize else {
                request.refusal = LogError(
                    .batchTooLarge, "the prepared events hold about \(size) bytes; one record may hold \(maxBatchSize)")
                continue
            }
            guard size <= room else {
                defer { group.removeSubrange(position...) }
                return (Array(group[position...]), settlers)
            }
            events.accepted?()
            request.payloads = events.payloads
            request.timestamps = Array(repeating: time, count: events.payloads.count)
            sequence += UInt64(events.payloads.count)
            room -= size
            if !events.payloads.isEmpty || events.accepted != nil, let settler = request.settler,
                !settlers.contains(where: { $0 === settler })
            {
                settlers.append(settler)
            }
        }
        return ([], settlers)
    }

    /// The writer thread: leads for async appenders and background syncs, syncs on a deadline
    /// every interval by the configured clock (a steady stream of appends cannot postpone it),
    /// and drains on close.
    private func run() {
        let interval = syncInterval.map { max(1, $0.components.seconds * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000) }
        var nextSync = interval.map { clock.now().microsecondsSinceEpoch + $0 }
        monitor.lock()
        while true {
            // The clock is read only for an interval: a test's clock may step on each reading.
            if let deadline = nextSync, let interval {
                let now = clock.now().microsecondsSinceEpoch
                if now >= deadline {
                    if unsynced, !queue.contains(where: { $0.isSync && !$0.hasBlockedCaller }) {
                        queue.append(AppendRequest(payloads: [], timestamps: nil, isSync: true))
                    }
                    nextSync = now + interval
                } else if deadline - now > interval {
                    // The clock went back: the next sync is an interval from now, not from then.
                    nextSync = now + interval
                }
            }
            if !leaderActive, !queue.isEmpty, stopping || queue.contains(where: { !$0.hasBlockedCaller }) {
                lead()
                continue
            }
            if stopping, queue.isEmpty, !leaderActive { break }
            if let deadline = nextSync, clockWatch == nil {
                monitor.wait(timeout: .microseconds(max(0, deadline - clock.now().microsecondsSinceEpoch)))
            } else {
                // No interval, or a stepped clock, whose moves wake this thread.
                monitor.wait()
            }
        }
        monitor.unlock()
        threadExited.signal()
    }
}
