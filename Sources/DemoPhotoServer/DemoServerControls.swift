import Synchronization

/// What a running demo server has been told to do and what it has seen: faults to answer with,
/// a gate that holds image requests until released, and a record of the requests.
public final class DemoServerControls: Sendable {
    /// A search the server answered (or was asked for).
    public struct SearchRecord: Sendable, Hashable {
        public var latitude: Double?
        public var longitude: Double?
        public var page: Int
        public var perPage: Int
        public var extras: String
    }

    struct State {
        var searchFaults: [DemoFault] = []
        var imageFaultRule: DemoImageFaultRule?
        var holdingImages = false
        var allowance = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
        var heldSearches: [CheckedContinuation<Void, Never>] = []
        var heldSearchWaiters = CountWaiters()
        var mostWaiting = 0
        var searches: [SearchRecord] = []
        var imageRequests = 0
        var stopping = false
        var active = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var heldImageWaiters = CountWaiters()
    }

    let state = Mutex(State())

    init() {}

    /// The next searches answer with these faults, one each, in order.
    public func failNextSearches(with faults: [DemoFault]) {
        state.withLock { $0.searchFaults += faults }
    }

    /// Image requests answer with what `rule` says (nil: normally). Pass nil to clear.
    public func failImages(_ rule: DemoImageFaultRule?) {
        state.withLock { $0.imageFaultRule = rule }
    }

    /// From now on image requests wait until released (``releaseImages(_:)``), so a test can
    /// see placeholders before photos and act while downloads are in flight.
    public func holdImages() {
        state.withLock { $0.holdingImages = true }
    }

    /// Lets `count` held image requests proceed (waiting ones first, then later arrivals).
    public func releaseImages(_ count: Int) {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let now = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(now.count)
            state.allowance += count - now.count
            return now
        }
        for continuation in resumed { continuation.resume() }
    }

    /// Stops holding image requests and lets every waiting one proceed.
    public func releaseAllImages() {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holdingImages = false
            state.allowance = 0
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in resumed { continuation.resume() }
    }

    /// Lets every search held by a ``DemoFault/held`` fault answer.
    public func releaseHeldSearches() {
        let resumed = state.withLock { state in
            defer { state.heldSearches = [] }
            return state.heldSearches
        }
        for continuation in resumed { continuation.resume() }
    }

    /// How many searches a ``DemoFault/held`` fault holds now.
    public var heldSearchCount: Int { state.withLock { $0.heldSearches.count } }

    /// Returns once `count` searches are held (or the server stops): a test waits for the
    /// search as an event.
    public func heldSearches(reach count: Int) async {
        await waitFor { state, continuation in
            state.stopping || state.heldSearchWaiters.enlist(continuation, for: count, current: state.heldSearches.count)
        }
    }

    /// Returns once `count` image requests wait at the gate (or the server stops): a test waits
    /// for the downloads as an event.
    public func heldImages(reach count: Int) async {
        await waitFor { state, continuation in
            state.stopping || state.heldImageWaiters.enlist(continuation, for: count, current: state.waiting.count)
        }
    }

    /// How many image requests are waiting at the gate.
    public var heldImageRequests: Int { state.withLock { $0.waiting.count } }
    /// The most image requests that were ever waiting at the gate at once: a test's check that
    /// a client never had more than so many downloads in flight, read once they are all done.
    public var mostHeldImageRequests: Int { state.withLock { $0.mostWaiting } }
    /// The searches asked for, in order: the last ``keptSearches`` of them (the service runs for
    /// as long as `vt serve` does, and a record each would grow without end).
    public var searches: [SearchRecord] { state.withLock { $0.searches } }
    /// The most searches ``searches`` holds; past it, the older half goes.
    public static let keptSearches = 1_000
    /// Requests being answered now (a delayed one counts until its answer is written).
    public var activeRequests: Int { state.withLock { $0.active } }
    /// Returns once no request is being answered (at once when none is): a test waits for the
    /// slow answers to end as an event.
    public func idle() async {
        await waitFor { state, continuation in
            if state.active == 0 { return true }
            state.idleWaiters.append(continuation)
            return false
        }
    }

    /// Resumes the caller at once when `enlist` (run under the lock) says its moment has come;
    /// otherwise `enlist` has filed it among the waiters resumed when it does.
    private func waitFor(_ enlist: (inout State, CheckedContinuation<Void, Never>) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if state.withLock({ enlist(&$0, continuation) }) { continuation.resume() }
        }
    }

    /// How many image requests arrived.
    public var imageRequests: Int { state.withLock { $0.imageRequests } }

    // MARK: Used by the handlers

    func nextSearchFault(recording record: SearchRecord) -> DemoFault? {
        state.withLock { state in
            if state.searches.count == Self.keptSearches { state.searches.removeFirst(Self.keptSearches / 2) }
            state.searches.append(record)
            return state.searchFaults.isEmpty ? nil : state.searchFaults.removeFirst()
        }
    }

    func imageFault(for photoID: String) -> DemoFault? {
        let (number, rule) = state.withLock { state in
            defer { state.imageRequests += 1 }
            return (state.imageRequests, state.imageFaultRule)
        }
        return rule?(number, photoID)
    }

    func passImageGate() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (proceed, due) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if !state.holdingImages || state.stopping { return (true, []) }
                if state.allowance > 0 {
                    state.allowance -= 1
                    return (true, [])
                }
                state.waiting.append(continuation)
                state.mostWaiting = max(state.mostWaiting, state.waiting.count)
                return (false, state.heldImageWaiters.reached(state.waiting.count))
            }
            if proceed { continuation.resume() }
            for waiter in due { waiter.resume() }
        }
    }

    /// Waits until ``releaseHeldSearches()`` or the server stops.
    func holdSearch() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (proceed, due) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                if state.stopping { return (true, []) }
                state.heldSearches.append(continuation)
                return (false, state.heldSearchWaiters.reached(state.heldSearches.count))
            }
            if proceed { continuation.resume() }
            for waiter in due { waiter.resume() }
        }
    }

    /// Sleeps for `duration`, or less when the server stops.
    func delay(_ duration: Duration) async {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end, !state.withLock({ $0.stopping }) {
            try? await Task.sleep(for: min(.milliseconds(50), end - ContinuousClock.now))
        }
    }

    /// Counts a request as active while `answer` runs.
    func answering<T>(_ answer: () async -> T) async -> T {
        state.withLock { $0.active += 1 }
        let result = await answer()
        let idle = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.active -= 1
            guard state.active == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in idle { waiter.resume() }
        return result
    }

    func stop() {
        let waiters = state.withLock { state in
            state.stopping = true
            return state.heldSearchWaiters.all() + state.heldImageWaiters.all()
        }
        for waiter in waiters { waiter.resume() }
        releaseAllImages()
        releaseHeldSearches()
    }
}
