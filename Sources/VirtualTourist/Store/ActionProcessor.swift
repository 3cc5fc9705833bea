import BlobStore
import EventLog
import Synchronization

/// The one place where the store's state changes. Actions queue up; a single task takes all
/// that are waiting, checks each against the state as the ones before it leave it, appends the
/// accepted events of the whole group as one batch (one `fsync` for all), then applies them
/// and publishes the new state.
///
/// Invariants: only the processing task mutates `state`; an action's events are appended
/// together or not at all; a refused action appends nothing; `published` always equals a
/// state whose events are all in the log.
final class ActionProcessor: @unchecked Sendable {
    typealias Build = @Sendable (TouristState) throws -> [ProposedEvent]

    /// Work that runs alone, between groups of actions: it sees the state, may append events
    /// and may replace the state with an equal-sequence one (a forget's replay).
    typealias Job = @Sendable (ExclusiveAccess) async throws -> Void

    struct Pending {
        var build: Build?
        var job: Job?
        var continuation: CheckedContinuation<[RecordedEvent], any Error>
    }

    // Internal, not private, for ActionProcessor+Snapshots.swift.
    struct Shared {
        var queue: [Pending] = []
        var closed = false
        var published: TouristState
        /// The log's head at `published.sequence`: a snapshot of `published` is bound to it.
        var publishedHead: LogHead
        var subscribers: [Int: AsyncStream<StoreChange>.Continuation] = [:]
        var nextSubscriber = 0
        // Snapshot bookkeeping: read by the processing task, written by the snapshot task.
        var lastSnapshot: UInt64
        var snapshotInFlight = false
        var snapshotFailure: (any Error)?
        var unconfirmedDigests: Set<PhotoDigest> = []
    }

    private let log: EventLog
    private let clock: any LogClock
    let snapshots: SnapshotFolder
    private let blobs: BlobStore
    let shared: Mutex<Shared>
    /// Why every action is refused (a read-only replica), nil when actions are taken.
    let refusal: String?
    private let wakeups: AsyncStream<Void>.Continuation
    private var task: Task<Void, Never>?

    // Touched only by the processing task (and by `close` after it ended).
    private var state: TouristState
    private var lastTimestamp: LogTimestamp
    var snapshotTask: Task<Void, Never>?

    init(
        log: EventLog, state: TouristState, lastTimestamp: LogTimestamp, lastSnapshot: UInt64, snapshots: SnapshotFolder,
        blobs: BlobStore, refusal: String? = nil
    ) {
        self.refusal = refusal
        self.log = log
        self.clock = log.configuration.clock
        self.snapshots = snapshots
        self.blobs = blobs
        self.state = state
        self.lastTimestamp = lastTimestamp
        self.shared = Mutex(Shared(published: state, publishedHead: log.head, lastSnapshot: lastSnapshot))
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        self.wakeups = continuation
        self.task = Task { [self] in
            for await _ in stream {
                while let group = takeQueue() { await process(group) }
            }
        }
    }

    var published: TouristState { shared.withLock { $0.published } }

    /// Why the most recent snapshot that failed could not be written (nil: none failed).
    var snapshotFailure: (any Error)? { shared.withLock { $0.snapshotFailure } }

    /// The photos named by events whose append failed: an unconfirmed append may still be in
    /// the log when it is reopened, so their images must not be collected before then.
    var unconfirmedDigests: Set<PhotoDigest> { shared.withLock { $0.unconfirmedDigests } }

    /// Runs an action: `build` proposes events from the current state; they are checked,
    /// appended and applied, or the action fails and nothing is appended.
    func submit(_ build: @escaping Build) async throws -> [RecordedEvent] {
        if let refusal { throw DomainError(.readOnly, refusal) }
        return try await enqueue(build: build, job: nil)
    }

    private func enqueue(build: Build?, job: Job?) async throws -> [RecordedEvent] {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = shared.withLock { shared in
                guard !shared.closed else { return false }
                shared.queue.append(Pending(build: build, job: job, continuation: continuation))
                return true
            }
            if accepted {
                wakeups.yield()
            } else {
                continuation.resume(throwing: DomainError(.closed, "the store is closed"))
            }
        }
    }

    /// Runs `job` alone: queued actions before it are done first, later ones wait until it ends.
    func exclusively(_ job: @escaping Job) async throws {
        _ = try await enqueue(build: nil, job: job)
    }

    /// What a ``Job`` may do, on the processing task.
    struct ExclusiveAccess: Sendable {
        fileprivate let processor: ActionProcessor

        var state: TouristState { processor.published }

        /// Checks, appends and applies `events` as one action would.
        func append(_ events: [DomainEvent]) async throws -> [RecordedEvent] {
            let proposals = events.map { ProposedEvent(event: $0) }
            let results = await processor.commit([{ _ in proposals }])
            return try results[0].get()
        }

        /// Appends and applies events another copy of the log holds (a replica's only way in).
        func appendReplicated(_ events: [LogEvent]) async throws -> (events: [RecordedEvent], head: LogHead) {
            try await processor.appendReplicated(events)
        }

        /// Waits for a snapshot that an append started (it is written from the state before a
        /// replacement, so a job that rewrites snapshots lets it land first).
        func snapshotsSettled() async {
            await processor.snapshotTask?.value
        }

        /// Replaces the state with `state` (same sequence: the same history, read again) and
        /// publishes it as a change with no events.
        func replaceState(_ state: TouristState) {
            processor.replace(state)
        }
    }

    private func replace(_ replacement: TouristState) {
        precondition(replacement.sequence == state.sequence, "a replacement state covers the same events")
        state = replacement
        publish(StoreChange(events: [], state: state), head: shared.withLock { $0.publishedHead })
    }

    /// Makes `change.state` the published state, bound to `head`, and tells every subscriber.
    private func publish(_ change: StoreChange, head: LogHead) {
        let subscribers = shared.withLock { shared in
            shared.published = change.state
            shared.publishedHead = head
            return Array(shared.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(change) }
    }

    func changes() -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = shared.withLock { shared in
            guard !shared.closed else { return nil }
            let id = shared.nextSubscriber
            shared.nextSubscriber += 1
            shared.subscribers[id] = continuation
            return id
        }
        if let id {
            continuation.onTermination = { [weak self] _ in _ = self?.shared.withLock { $0.subscribers.removeValue(forKey: id) } }
        } else {
            continuation.finish()
        }
        return stream
    }

    /// Refuses new actions, finishes the queued ones, waits for a snapshot in flight and
    /// writes the final one.
    func close() async {
        let alreadyClosed = shared.withLock { shared in
            defer { shared.closed = true }
            return shared.closed
        }
        guard !alreadyClosed else { return }
        wakeups.finish()
        await task?.value
        await snapshotTask?.value
        // The published head, not the log's: after a failed sync the log's head can be past
        // the last events the store accepted.
        let (lastSnapshot, head) = shared.withLock { ($0.lastSnapshot, $0.publishedHead) }
        if state.sequence > lastSnapshot {
            _ = writeSnapshot(state, head)
        }
        let subscribers = shared.withLock { shared in
            defer { shared.subscribers = [:] }
            return Array(shared.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// For a store dropped without `close`: refuse new actions and let the processing task end
    /// after the queued ones, so the log is released. No final snapshot is written.
    func stopWithoutWaiting() {
        shared.withLock { $0.closed = true }
        wakeups.finish()
    }

    private func takeQueue() -> [Pending]? {
        shared.withLock { shared in
            guard !shared.queue.isEmpty else { return nil }
            defer { shared.queue = [] }
            return shared.queue
        }
    }

    /// Runs the group's actions together, and each job alone in its place.
    private func process(_ group: [Pending]) async {
        var actions: [Pending] = []
        func flush() async {
            guard !actions.isEmpty else { return }
            let results = await commit(actions.map { $0.build! })
            for (pending, result) in zip(actions, results) { pending.continuation.resume(with: result) }
            actions = []
        }
        for pending in group {
            guard let job = pending.job else {
                actions.append(pending)
                continue
            }
            await flush()
            do {
                try await job(ExclusiveAccess(processor: self))
                pending.continuation.resume(returning: [])
            } catch {
                pending.continuation.resume(throwing: error)
            }
        }
        await flush()
    }

    /// Checks each build against the state as the ones before it leave it, appends the accepted
    /// events as one batch, applies and publishes them; one result per build, in order.
    private func commit(_ builds: [Build]) async -> [Result<[RecordedEvent], any Error>] {
        var results = [Result<[RecordedEvent], any Error>?](repeating: nil, count: builds.count)
        var scratch = state
        // The clock may step back (NTP); the log's time never does, so such events get the
        // last time used until the clock catches up.
        let now = max(clock.now(), lastTimestamp)
        var accepted: [(Int, [RecordedEvent])] = []
        var payloads: [[UInt8]] = []
        for (position, build) in builds.enumerated() {
            do {
                let proposed = try build(scratch)
                var target = scratch
                var recorded: [RecordedEvent] = []
                for (index, proposal) in proposed.enumerated() {
                    let sequence = scratch.sequence + UInt64(index) + 1
                    let cause: UInt64? = switch proposal.cause {
                    case .none: nil
                    case .sequence(let sequence): sequence
                    case .earlierInAction(let position): recorded[position].sequence
                    }
                    if let problem = target.problem(with: proposal.event) { throw problem }
                    if case .photoDownloaded(let photo) = proposal.event, try !blobs.contains(photo.digest) {
                        // An event never names a blob that is not stored (docs/BLOBS.md).
                        throw DomainError(
                            .invalidArgument, "the image \(photo.digest) is not stored; store its bytes before recording it")
                    }
                    let event = RecordedEvent(sequence: sequence, timestamp: now, cause: cause, event: proposal.event)
                    target.apply(event)
                    recorded.append(event)
                }
                scratch = target
                payloads += recorded.map { EventCodec.encode($0.event, cause: $0.cause) }
                accepted.append((position, recorded))
            } catch {
                results[position] = .failure(error)
            }
        }
        func finished() -> [Result<[RecordedEvent], any Error>] {
            results.map { $0 ?? .success([]) }
        }
        guard !payloads.isEmpty else {
            for (position, _) in accepted { results[position] = .success([]) }
            return finished()
        }
        do {
            let range = try await log.append(
                contentsOf: payloads, timestamps: Array(repeating: now, count: payloads.count))
            precondition(range.lowerBound == state.sequence + 1, "only the store's processor appends to its log")
        } catch {
            // A failed write is undone (nothing changed); a failed sync leaves the events'
            // fate to the next open, and the log's message says so.
            let logError = error as? LogError
            let outcome = logError?.code == .writerFailed ? "" : "; nothing changed"
            let failure = DomainError(
                .storage, "the log did not accept the events: \(logError?.message ?? "\(error)")\(outcome)", cause: error)
            let named = accepted.flatMap(\.1).compactMap { recorded -> PhotoDigest? in
                if case .photoDownloaded(let photo) = recorded.event { return photo.digest }
                return nil
            }
            shared.withLock { $0.unconfirmedDigests.formUnion(named) }
            for (position, _) in accepted { results[position] = .failure(failure) }
            return finished()
        }
        state = scratch
        lastTimestamp = now
        publish(StoreChange(events: accepted.flatMap(\.1), state: state), head: log.head)
        for (position, recorded) in accepted { results[position] = .success(recorded) }
        startSnapshotIfDue()
        return finished()
    }

    /// Appends events that another copy of the log holds, verbatim (their payloads and times),
    /// and applies them without the rules: the original checked them. For a replica.
    func appendReplicated(_ events: [LogEvent]) async throws -> (events: [RecordedEvent], head: LogHead) {
        guard let first = events.first else { return ([], shared.withLock { $0.publishedHead }) }
        guard first.sequence == state.sequence + 1 else {
            throw DomainError(.invalidArgument, "replicated event \(first.sequence) does not follow this store's last event, \(state.sequence)")
        }
        var scratch = state
        var recorded: [RecordedEvent] = []
        recorded.reserveCapacity(events.count)
        for event in events {
            // An erased event (its place forgotten on the original before it was shipped)
            // decodes to a forgotten one, which the fold passes over, as in a replay.
            let decoded = try EventCodec.decode(event)
            scratch.apply(decoded)
            recorded.append(decoded)
        }
        do {
            if events.contains(where: \.isErased) {
                // A hot-tail record cannot hold an erased event: the batch becomes a block file.
                _ = try log.appendAsBlock(events)
            } else {
                _ = try await log.append(contentsOf: events.map { Array($0.payload) }, timestamps: events.map(\.timestamp))
            }
        } catch {
            throw DomainError(.storage, "the replica's log did not accept events \(first.sequence)…: \(error)", cause: error)
        }
        state = scratch
        lastTimestamp = max(lastTimestamp, events[events.count - 1].timestamp)
        let head = log.head
        publish(StoreChange(events: recorded, state: state), head: head)
        startSnapshotIfDue()
        return (recorded, head)
    }
}
