import BlobStore
import Dispatch
import PhotoSources
import VirtualTourist

/// A piece of work in flight, named so that it is never started twice and can be cancelled
/// when its album moves on.
enum WorkKey: Hashable, Sendable {
    /// Requesting a settled pin's album (pre-fetch).
    case request(PinID, collection: UInt32)
    /// Searching for a requested collection's photos.
    case search(PinID, collection: UInt32)
    /// Downloading one photo of a listed collection.
    case download(PinID, collection: UInt32, slot: UInt32)

    var pin: PinID {
        switch self {
        case .request(let pin, _), .search(let pin, _), .download(let pin, _, _): pin
        }
    }

    var collection: UInt32 {
        switch self {
        case .request(_, let collection), .search(_, let collection), .download(_, let collection, _): collection
        }
    }
}

/// The pipeline's bookkeeping: which work runs, reactions to the store's events, and knowing
/// when everything is done. The work itself runs in detached tasks, never on this actor.
actor PipelineCore {
    let store: TouristStore
    let source: any PhotoSource
    let options: PipelineOptions
    let limiter: RequestLimiter

    /// Work under way, by key: its token (the start it came from) and its task, nil for a
    /// download that waits its turn in `waiting`.
    private var work: [WorkKey: (token: Int, task: Task<Void, Never>?)] = [:]
    private var nextToken = 0
    /// Downloads waiting for a turn, oldest first (from `waitingHead` on). They get a task only
    /// when a turn is free: a task waiting at the limiter held about 2.5 KB, and a few hundred
    /// pins dropped at once queued thousands of them; the memory stayed with the allocator
    /// after they ended (docs/WEB.md, "Memory after a write-heavy load").
    private var waiting: [(key: WorkKey, token: Int, operation: @Sendable (PipelineCore) async -> Void)] = []
    private var waitingHead = 0
    private var downloadsRunning = 0
    /// The last sequence number whose reactions have been started.
    private var processed: UInt64 = 0
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var stopped = false
    /// What went wrong that could not be recorded in the log (newest last, at most 100).
    private(set) var problems: [String] = []

    init(store: TouristStore, source: any PhotoSource, options: PipelineOptions) {
        self.store = store
        self.source = source
        self.options = options
        self.limiter = RequestLimiter(limit: options.concurrentDownloads)
    }

    // MARK: Reacting

    /// Starts what the state says is pending: albums to pre-fetch, searches without an answer,
    /// photos still placeholders.
    func resume(from state: TouristState) {
        processed = max(processed, state.sequence)
        for pin in state.pinsInDropOrder {
            let album = pin.album
            // In a store of several devices, a request is answered by the device that made it:
            // only its results count (docs/DEVICES.md, "Rules by intent").
            guard album.phase == .notRequested || album.requestedBy == state.localDevice else { continue }
            switch album.phase {
            case .notRequested:
                if options.prefetch { startRequest(pin.id, collection: album.collection, cause: nil) }
            case .listing:
                if let request = album.request { startSearch(request, cause: album.requestedAt) }
            case .listed:
                startDownloads(pin.id, album: album, slots: album.slots.filter { !$0.isResolved }, cause: album.listedAt)
            case .failed:
                break
            }
        }
    }

    /// Reacts to one event; `state` is the state after the group it came in.
    func handle(_ recorded: RecordedEvent, in state: TouristState) {
        guard !stopped else { return }
        switch recorded.event {
        case .pinDropped(let pin, _), .pinDragged(let pin, _):
            guard let album = state.pins[pin]?.album else { return }
            cancel(pin, below: album.collection)
            if options.prefetch, album.phase == .notRequested {
                startRequest(pin, collection: album.collection, cause: recorded.sequence)
            }
        case .pinRemoved(let pin), .placeForgotten(let pin, _):
            cancel(pin, below: .max)
        case .collectionReplaced(let pin, _, let new):
            cancel(pin, below: new)
        case .albumRequested(let request):
            startSearch(request, cause: recorded.sequence)
        case .photosListed(let listing):
            guard let album = state.pins[listing.pin]?.album, album.collection == listing.collection else { return }
            startDownloads(listing.pin, album: album, slots: album.slots.filter { !$0.isResolved }, cause: recorded.sequence)
        case .photoRemoved(let pin, let collection, let slot, _):
            cancel(.download(pin, collection: collection, slot: slot))
        case .regionChanged, .photoDownloaded, .photoDownloadFailed, .albumRequestFailed, .forgotten, .deviceSeen:
            break
        }
    }

    func markProcessed(_ sequence: UInt64) {
        processed = max(processed, sequence)
        wakeIdleWaitersIfIdle()
    }

    // MARK: Starting and ending work

    func startRequest(_ pin: PinID, collection: UInt32, cause: UInt64?) {
        let store = store
        let perPage = UInt32(options.perPage)
        start(.request(pin, collection: collection)) { pipeline in
            do {
                try await store.requestAlbum(for: pin, perPage: perPage, collection: collection, cause: cause)
            } catch {
                await pipeline.note(error, doing: "requesting pin \(pin)'s album")
            }
        }
    }

    func startSearch(_ request: AlbumRequest, cause: UInt64?) {
        let work = PipelineWork(store: store, source: source, limiter: limiter)
        // A collection is requested again only after its search failed (retry); the failed
        // search may not have left `work` yet when the new request arrives, and must not
        // keep the new one from starting.
        start(.search(request.pin, collection: request.collection), replacing: true) { pipeline in
            await work.search(request, cause: cause, pipeline: pipeline)
        }
    }

    /// - Parameter replacing: true for a retry of photos that failed, whose downloads may not
    ///   have left `work` yet.
    func startDownloads(_ pin: PinID, album: Album, slots: [PhotoSlot], cause: UInt64?, replacing: Bool = false) {
        let work = PipelineWork(store: store, source: source, limiter: limiter)
        let collection = album.collection
        for slot in slots {
            let number = slot.number
            let url = slot.photo.url
            start(.download(pin, collection: collection, slot: number), replacing: replacing) { pipeline in
                await work.download(url, pin: pin, collection: collection, slot: number, cause: cause, pipeline: pipeline)
            }
        }
    }

    /// Starts `operation` under `key`, unless work under that key runs already; with
    /// `replacing`, that work (which has recorded its result and is ending) is let go instead.
    private func start(
        _ key: WorkKey, replacing: Bool = false, _ operation: @escaping @Sendable (PipelineCore) async -> Void
    ) {
        guard !stopped else { return }
        if replacing { work[key] = nil }
        guard work[key] == nil else { return }
        let token = nextToken
        nextToken += 1
        if case .download = key, downloadsRunning >= options.concurrentDownloads {
            work[key] = (token, nil)
            waiting.append((key, token, operation))
            return
        }
        launch(key, token: token, operation)
    }

    private func launch(_ key: WorkKey, token: Int, _ operation: @escaping @Sendable (PipelineCore) async -> Void) {
        if case .download = key { downloadsRunning += 1 }
        let task = Task.detached { [self] in
            await operation(self)
            await self.finished(key, token: token)
        }
        work[key] = (token, task)
    }

    private func finished(_ key: WorkKey, token: Int) {
        if work[key]?.token == token { work[key] = nil }
        if case .download = key {
            downloadsRunning -= 1
            startWaitingDownloads()
        }
        wakeIdleWaitersIfIdle()
    }

    /// Gives free turns to the oldest waiting downloads that are still wanted (one cancelled
    /// or started again meanwhile has left `work`, or holds another token there).
    private func startWaitingDownloads() {
        while downloadsRunning < options.concurrentDownloads, waitingHead < waiting.count, !stopped {
            let next = waiting[waitingHead]
            waitingHead += 1
            if let entry = work[next.key], entry.token == next.token, entry.task == nil {
                launch(next.key, token: next.token, next.operation)
            }
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: false)
            waitingHead = 0
        } else if waitingHead > 1024, waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }

    /// Cancels the pin's work for collections before `collection` (their results would be
    /// refused as stale anyway; cancelling saves the downloads).
    private func cancel(_ pin: PinID, below collection: UInt32) {
        for key in work.keys where key.pin == pin && key.collection < collection { cancel(key) }
    }

    private func cancel(_ key: WorkKey) {
        guard let running = work.removeValue(forKey: key) else { return }
        running.task?.cancel()  // a waiting download is passed over when its turn comes
        wakeIdleWaitersIfIdle()
    }

    /// Cancels everything and waits for it to end; nothing starts afterwards.
    func stop() async {
        stopped = true
        let running = work.values.compactMap(\.task)
        work.removeAll()
        waiting.removeAll()
        waitingHead = 0
        for task in running { task.cancel() }
        for task in running { await task.value }
        wakeIdleWaitersIfIdle(force: true)
    }

    // MARK: Idleness and problems

    var activity: PipelineActivity {
        var activity = PipelineActivity()
        for (key, entry) in work {
            switch key {
            case .request: activity.requests += 1
            case .search: activity.searches += 1
            case .download:
                activity.downloads += 1
                if entry.task == nil { activity.downloadsWaiting += 1 }
            }
        }
        return activity
    }

    /// Returns once no work runs and every appended event has been reacted to.
    func waitUntilIdle() async {
        if isIdle { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    private var isIdle: Bool { stopped || (work.isEmpty && processed >= store.lastSequence) }

    private func wakeIdleWaitersIfIdle(force: Bool = false) {
        guard force || isIdle, !idleWaiters.isEmpty else { return }
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Keeps a problem that could not become an event. Refusals that only mean the album moved
    /// on (a newer collection, a removed pin or photo, a request someone else made) are not
    /// problems.
    func note(_ error: any Error, doing what: String) {
        if let error = error as? DomainError, Self.movedOn.contains(error.code) { return }
        if error is CancellationError { return }
        problems.append("\(what): \(error)")
        if problems.count > 100 { problems.removeFirst(problems.count - 100) }
    }

    static let movedOn: Set<DomainError.Code> = [.staleCollection, .unknownPin, .unknownPhoto, .wrongAlbumState, .closed]
}

/// Runs blocking work (an fsync) on a thread of its own, not on the cooperative pool.
func onBlockingThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .utility).async { continuation.resume(with: Result { try work() }) }
    }
}
