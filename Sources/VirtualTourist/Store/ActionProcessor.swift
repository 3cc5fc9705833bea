import DeviceLogs
import BlobStore
import EventLog
import Synchronization

/// The one place where the store's state changes, on the log's one commit path. Each action is
/// an append the log prepares when its turn comes (``EventLog/append(preparing:settler:)``):
/// the log's writer gives it the sequence number and time its events get, decided there once;
/// the action's build is checked against the state as the actions before it in the same record
/// leave it; the accepted events of every action waiting go into one record and one `fsync`;
/// then the log settles the record here, and the new state is published before any of the
/// actions returns. Jobs (a forget's rewrite, a replica's batches) run alone between actions
/// (``ActionGate``).
///
/// Invariants: `state`, `scratch` and `unsettled` are touched only by the log's writer while it
/// prepares and settles this store's appends, or by the one job running, never both (the gate
/// and the log's leader order them); an action's events are appended together or not at all; a
/// refused action appends nothing; `published` always equals a state whose events are all in
/// the log.
final class ActionProcessor: @unchecked Sendable, CommitSettler {
    typealias Build = @Sendable (TouristState) throws -> [ProposedEvent]

    /// Work that runs alone, between groups of actions: it sees the state, may append events
    /// and may replace the state with an equal-sequence one (a forget's replay).
    typealias Job = @Sendable (ExclusiveAccess) async throws -> Void

    // Internal, not private, for ActionProcessor+Snapshots.swift.
    struct Shared {
        var closed = false
        var published: TouristState
        /// The log's head at `published.sequence`: a snapshot of `published` is bound to it.
        var publishedHead: LogHead
        /// In a store of several devices, the events `published` folded, which a merged
        /// snapshot of it is bound to.
        var publishedFrontier: MergedFrontier?
        var subscribers: [Int: AsyncStream<StoreChange>.Continuation] = [:]
        var nextSubscriber = 0
        // Snapshot bookkeeping: read where records are settled, written by the snapshot task.
        var lastSnapshot: UInt64
        var snapshotInFlight = false
        var snapshotFailure: (any Error)?
        var unconfirmedDigests: Set<PhotoDigest> = []
        /// The snapshot being written off the action path, if one is.
        var snapshotTask: Task<Void, Never>?
    }

    private let log: EventLog
    let snapshots: SnapshotFolder
    private let blobs: BlobStore
    let shared: Mutex<Shared>
    /// Why every action is refused (a read-only replica), nil when actions are taken.
    let refusal: String?
    private let gate = ActionGate()

    // See the invariants above (internal, not private, for ActionProcessor+Refold.swift).
    /// The state of every settled record.
    var state: TouristState
    /// `state` and the events accepted into the record being written.
    var scratch: TouristState
    /// Those events, in order.
    private var unsettled: [RecordedEvent] = []
    /// In a store of several devices: how this device's events are numbered in the merged order
    /// (nil in a store of one, where a position is a sequence number).
    var numbering: MergedNumbering?
    /// The other devices' logs as the state folded them, by device (they change only when a
    /// sync through the cluster takes events into the open store: ActionProcessor+Refold.swift):
    /// with this device's log, the frontier of a merged snapshot.
    var copiedLogs: [MergedFrontier.Log]
    /// Recent published states of a store of several devices, to fold again from (+Refold).
    var checkpoints: [MergedCheckpoint] = []
    /// This device, in a store of several devices, and the events copied from the others:
    /// readable from any thread, changed only by a refold.
    let merging: Mutex<(device: DeviceID?, offset: UInt64)>
    var localDevice: DeviceID? { merging.withLock { $0.device } }
    var mergedOffset: UInt64 { merging.withLock { $0.offset } }

    init(
        log: EventLog, state: TouristState, lastSnapshot: UInt64, snapshots: SnapshotFolder, blobs: BlobStore,
        refusal: String? = nil, numbering: MergedNumbering? = nil, copiedLogs: [MergedFrontier.Log] = []
    ) {
        self.refusal = refusal
        self.numbering = numbering
        let copiedLogs = copiedLogs.sorted { $0.device < $1.device }
        self.copiedLogs = copiedLogs
        self.merging = Mutex((numbering?.device, numbering?.offset ?? 0))
        self.log = log
        self.snapshots = snapshots
        self.blobs = blobs
        self.state = state
        self.scratch = state
        let head = log.head
        self.shared = Mutex(Shared(
            published: state, publishedHead: head, publishedFrontier: numbering.map { Self.frontier($0, head, copiedLogs) },
            lastSnapshot: lastSnapshot))
    }

    /// The events a state folded: the copies as they are (`copied`, by device), this device's log
    /// through `head`.
    static func frontier(_ numbering: MergedNumbering, _ head: LogHead, _ copied: [MergedFrontier.Log]) -> MergedFrontier {
        let own = MergedFrontier.Log(
            device: numbering.device, last: head.sequence,
            lastTime: head.sequence == 0 ? LogTimestamp(microsecondsSinceEpoch: 0) : numbering.lastTime ?? LogTimestamp(microsecondsSinceEpoch: 0),
            head: head.sequence == 0 ? [UInt8](repeating: 0, count: 32) : head.hash.bytes)
        var logs = copied
        logs.insert(own, at: logs.firstIndex { $0.device > own.device } ?? logs.count)
        return MergedFrontier(local: numbering.device, logs: logs, runs: numbering.runs)
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
        try await gate.enterAction()
        defer { gate.leaveAction() }
        return try await commit(build)
    }

    /// Runs `job` alone: actions admitted before it are done first, later ones wait until it ends.
    func exclusively(_ job: @escaping Job) async throws {
        try await gate.enterJob()
        defer { gate.leaveJob() }
        try await job(ExclusiveAccess(processor: self))
    }

    /// What a ``Job`` may do, while it runs alone.
    struct ExclusiveAccess: Sendable {
        let processor: ActionProcessor

        var state: TouristState { processor.published }

        /// Checks, appends and applies `events` as one action would.
        func append(_ events: [DomainEvent]) async throws -> [RecordedEvent] {
            let proposals = events.map { ProposedEvent(event: $0) }
            return try await processor.commit { _ in proposals }
        }

        /// Appends and applies events another copy of the log holds (a replica's only way in).
        func appendReplicated(_ events: [LogEvent]) async throws -> (events: [RecordedEvent], head: LogHead) {
            try await processor.appendReplicated(events)
        }

        /// Waits for a snapshot that an append started (it is written from the state before a
        /// replacement, so a job that rewrites snapshots lets it land first).
        func snapshotsSettled() async {
            await processor.shared.withLock { $0.snapshotTask }?.value
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
        scratch = replacement
        // History was read again (a forget erased events): a state kept from before is not its fold.
        checkpoints = []
        publish(StoreChange(events: [], state: state, historyChangedFrom: 1), head: shared.withLock { $0.publishedHead })
    }

    /// Makes `change.state` the published state, bound to `head`, and tells every subscriber.
    func publish(_ change: StoreChange, head: LogHead) {
        let frontier = numbering.map { Self.frontier($0, head, copiedLogs) }
        if let frontier { keepCheckpoint(change.state, frontier) }
        let subscribers = shared.withLock { shared in
            shared.published = change.state
            shared.publishedHead = head
            shared.publishedFrontier = frontier
            return Array(shared.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(change) }
    }

    /// Tells every subscriber that these photos' bytes are stored now, with the published state.
    func announce(photos: Set<PhotoDigest>) {
        guard !photos.isEmpty else { return }
        let (state, subscribers) = shared.withLock { ($0.published, Array($0.subscribers.values)) }
        for subscriber in subscribers { subscriber.yield(StoreChange(events: [], state: state, photosArrived: photos)) }
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

    /// Refuses new actions, finishes the admitted and waiting ones, waits for a snapshot in
    /// flight and writes the final one.
    func close() async {
        let alreadyClosed = shared.withLock { shared in
            defer { shared.closed = true }
            return shared.closed
        }
        guard !alreadyClosed else { return }
        await gate.close()
        await shared.withLock { $0.snapshotTask }?.value
        // The published head, not the log's: after a failed sync the log's head can be past
        // the last events the store accepted.
        let (lastSnapshot, head, frontier) = shared.withLock { ($0.lastSnapshot, $0.publishedHead, $0.publishedFrontier) }
        if state.sequence > lastSnapshot {
            _ = writeSnapshot(SnapshotPoint(state: state, head: head, frontier: frontier))
        }
        let subscribers = shared.withLock { shared in
            defer { shared.subscribers = [:] }
            return Array(shared.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// For a store dropped without `close`: refuse new actions; those under way finish, and
    /// the log is released with the last reference. No final snapshot is written.
    func stopWithoutWaiting() {
        shared.withLock { $0.closed = true }
        gate.refuseNew()
    }

    /// Appends what `build` makes of the state as the actions before it leave it, at the place
    /// the log gives it; returns its events once the record holding them is settled.
    private func commit(_ build: @escaping Build) async throws -> [RecordedEvent] {
        let outcome = ActionOutcome()
        do {
            try await log.append(preparing: { [self] slot in prepare(build, at: slot, into: outcome) }, settler: self)
        } catch {
            // An action the rules refused appended nothing, whatever became of the record beside it.
            if let refusal = outcome.refusal { throw refusal }
            // A failed write is undone (nothing changed); a failed sync leaves the events'
            // fate to the next open, and the log's message says so.
            let logError = error as? LogError
            let what = logError?.code == .writerFailed ? "" : "; nothing changed"
            throw DomainError(.storage, "the log did not accept the events: \(logError?.message ?? "\(error)")\(what)", cause: error)
        }
        if let refusal = outcome.refusal { throw refusal }
        return outcome.recorded
    }

    /// Runs on the log's writer when the action's turn comes: checks the proposed events against
    /// `scratch`, numbers and times them as the slot says, and encodes them. The state changes
    /// only if the log takes them (`accepted`).
    private func prepare(_ build: Build, at slot: CommitSlot, into outcome: ActionOutcome) -> PreparedEvents {
        let offset = numbering?.offset ?? 0
        precondition(slot.firstSequence + offset == scratch.sequence + 1, "only the store's processor appends to its log")
        outcome.refusal = nil
        do {
            let proposed = try build(scratch)
            guard !proposed.isEmpty else { return PreparedEvents(payloads: []) }
            var target = scratch
            // In a store of several devices, what this device had seen of the others comes first.
            let said = seen(by: target, at: slot)
            for event in said { target.apply(event) }
            var recorded: [RecordedEvent] = []
            for (index, proposal) in proposed.enumerated() {
                // A cause is stored as a sequence number of this device's log: in a store of
                // several devices, a position is mapped back (another device's event is no cause here).
                let cause: UInt64? = switch proposal.cause {
                case .none: nil
                case .sequence(let position): numbering.map { $0.ownSequence(atPosition: position) } ?? position
                case .earlierInAction(let earlier): recorded[earlier].origin?.sequence ?? recorded[earlier].sequence
                }
                if let problem = target.problem(with: proposal.event, by: numbering?.device) { throw problem }
                if case .photoDownloaded(let photo) = proposal.event, try !blobs.contains(photo.digest) {
                    // An event never names a blob that is not stored (docs/BLOBS.md).
                    throw DomainError(
                        .invalidArgument, "the image \(photo.digest) is not stored; store its bytes before recording it")
                }
                let own = slot.firstSequence + UInt64(said.count + index)
                let event = RecordedEvent(
                    sequence: own + offset, timestamp: slot.time, cause: cause, event: proposal.event,
                    origin: numbering.map { EventOrigin(device: $0.device, sequence: own) })
                target.apply(event)
                recorded.append(event)
            }
            return PreparedEvents(payloads: (said + recorded).map { EventCodec.encode($0.event, cause: $0.cause) }) { [self] in
                scratch = target
                unsettled += said + recorded
                outcome.recorded = recorded
            }
        } catch {
            outcome.refusal = error
            return PreparedEvents(payloads: [])
        }
    }

    /// The `DeviceSeen` events an action's events follow (docs/DEVICES.md, "What an event carries
    /// for the merge"): one for each copy that holds more of its device than this device has said
    /// it saw, numbered and timed as the action's first events. None in a store of one device,
    /// and none once said: `state` folds them, and the copies do not change while the store is open.
    private func seen(by state: TouristState, at slot: CommitSlot) -> [RecordedEvent] {
        guard let numbering else { return [] }
        let said = state.devicesSeen[numbering.device] ?? [:]
        return copiedLogs.filter { $0.last > said[$0.device] ?? 0 }.enumerated().map { index, copy in
            let own = slot.firstSequence + UInt64(index)
            return RecordedEvent(
                sequence: own + numbering.offset, timestamp: slot.time, cause: nil,
                event: .deviceSeen(DeviceSeen(device: copy.device, through: copy.last, head: copy.head)),
                origin: EventOrigin(device: numbering.device, sequence: own))
        }
    }

    /// The log settles the record that holds the accepted actions: publish their state, or go
    /// back to the state before them.
    func settle(_ outcome: Result<LogHead, LogError>) {
        let events = unsettled
        unsettled = []
        switch outcome {
        case .success(let head):
            precondition(head.sequence + (numbering?.offset ?? 0) == scratch.sequence, "the settled record ends where the accepted actions do")
            numbering?.appended(events.map(\.sequence), lastTime: events.last?.timestamp)
            state = scratch
            publish(StoreChange(events: events, state: state), head: head)
            startSnapshotIfDue()
        case .failure:
            scratch = state
            let named = events.compactMap { recorded -> PhotoDigest? in
                if case .photoDownloaded(let photo) = recorded.event { return photo.digest }
                return nil
            }
            shared.withLock { $0.unconfirmedDigests.formUnion(named) }
        }
    }

    /// Appends events that another copy of the log holds, verbatim (their payloads and times),
    /// and applies them without the rules: the original checked them. For a replica.
    func appendReplicated(_ events: [LogEvent]) async throws -> (events: [RecordedEvent], head: LogHead) {
        guard let first = events.first else { return ([], shared.withLock { $0.publishedHead }) }
        guard numbering == nil else {
            throw DomainError(.invalidArgument, "a store of several devices takes other devices' events by sync, not as a replica")
        }
        guard first.sequence == state.sequence + 1 else {
            throw DomainError(.invalidArgument, "replicated event \(first.sequence) does not follow this store's last event, \(state.sequence)")
        }
        var replicated = state
        var recorded: [RecordedEvent] = []
        recorded.reserveCapacity(events.count)
        for event in events {
            // An erased event (its place forgotten on the original before it was shipped)
            // decodes to a forgotten one, which the fold passes over, as in a replay.
            let decoded = try EventCodec.decode(event)
            replicated.apply(decoded)
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
        state = replicated
        scratch = replicated
        let head = log.head
        publish(StoreChange(events: recorded, state: state), head: head)
        startSnapshotIfDue()
        return (recorded, head)
    }
}

/// What one action came to, filled in on the log's writer while it prepares the action, read by
/// the action once its append returned (the log's leader hands over in between).
private final class ActionOutcome: @unchecked Sendable {
    var recorded: [RecordedEvent] = []
    var refusal: (any Error)?
}
