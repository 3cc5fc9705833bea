import DemoPhotoServer
import HTTPListening
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A Wikimedia-Commons-compatible service on loopback, for the tests (and for trying the app
/// with `VT_COMMONS_ENDPOINT`): `GET /w/api.php` answers `list=geosearch`, `list=search` (with
/// CirrusSearch's `nearcoord:` and `filetype:`, `sroffset` paging and its 10,000-deep limit) and
/// `prop=imageinfo` as the MediaWiki Action API does, and `/thumb/ID/WIDTHpx-photo.png` serves
/// generated thumbnails. It reproduces what a client must cope with: `pages` keyed by page id,
/// HTML in `extmetadata`, fields missing from some files, SVG, PDF and video files among the
/// hits, thumbnails for at most 50 files a request, errors with HTTP 200, 429 with
/// `Retry-After`, `maxlag`, and a 403 for a request whose User-Agent names no contact.
///
/// ```swift
/// let commons = try await CommonsDouble.start()
/// commons.endpoint                       // http://127.0.0.1:PORT/w/api.php
/// commons.controls.failNextRequests(with: [.tooManyRequests(retryAfter: 1)])
/// commons.controls.mostAtOnce            // the most requests it ever answered at once
/// await commons.stop()
/// ```
public final class CommonsDouble: Sendable {
    public let endpoint: String
    public let origin: String
    public let controls: CommonsDoubleControls
    private let server: ListeningServer

    public static let apiPath = "/w/api.php"

    private init(origin: String, controls: CommonsDoubleControls, server: ListeningServer) {
        self.origin = origin
        self.endpoint = origin + Self.apiPath
        self.controls = controls
        self.server = server
    }

    /// Starts the service on `host` (loopback by default) and `port` (0: any free port), and
    /// returns once it listens. Places have the photos `catalogue` gives them: a geosearch
    /// names at most 500 of them, the wider search all of them.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, catalogue: DemoCatalogue = DemoCatalogue()
    ) async throws -> CommonsDouble {
        guard (0...65_535).contains(port) else { throw DemoServerError("port \(port) is outside 0…65535") }
        let controls = CommonsDoubleControls()
        let origin = Mutex<String?>(nil)
        let handlers = CommonsDoubleHandlers(catalogue: catalogue, controls: controls) { origin.withLock { $0 } ?? "" }
        let router = Router()
        router.get("/w/api.php") { request, _ in await controls.answering { await handlers.api(request) } }
        router.get("/thumb/:id/:name") { request, context in
            await controls.answering {
                await handlers.thumbnail(
                    id: context.parameters.get("id") ?? "", name: context.parameters.get("name") ?? "", request: request)
            }
        }
        router.get("/wiki/:title") { _, context in handlers.filePage(context.parameters.get("title") ?? "") }
        let server: ListeningServer
        do {
            server = try await ListeningServer.listen(
                router: router, host: host, port: port, serverName: "CommonsDouble", logLabel: "virtual-tourist.commons-double")
        } catch {
            throw DemoServerError(
                "the Commons-compatible service could not listen on \(host):\(port)" + (error.cause.map { " (\($0))" } ?? ""))
        }
        let base = server.origin(host: host)
        origin.withLock { $0 = base }
        return CommonsDouble(origin: base, controls: controls, server: server)
    }

    public func stop() async {
        controls.stop()
        await server.stop()
    }
}

/// A failure the Commons double can be told to answer an API request with.
public enum CommonsFault: Sendable, Hashable {
    /// This HTTP status with a short text body.
    case httpStatus(Int)
    /// HTTP 429 with `Retry-After`.
    case tooManyRequests(retryAfter: Int)
    /// HTTP 200, `{"error": {"code": "maxlag", …}}` and `Retry-After`, as the API answers a
    /// request whose `maxlag` is below the databases' lag.
    case maxlag(retryAfter: Int)
    /// HTTP 200 with `{"error": {"code": code, "info": info}}`.
    case apiError(code: String, info: String)
    /// HTTP 200 with an HTML page.
    case html
    /// Wait this long, then answer normally.
    case delay(Duration)
}

/// What the Commons double was told and what it saw.
public final class CommonsDoubleControls: Sendable {
    /// One request it received.
    public struct Record: Sendable, Hashable {
        /// "geosearch", "search", "imageinfo", "thumbnail" or "other".
        public var kind: String
        public var query: [String: String]
        public var userAgent: String?
    }

    struct State {
        var faults: [CommonsFault] = []
        var searchFaults: [CommonsFault] = []
        var thumbnailStatus: Int?
        var latency: Duration = .zero
        var records: [Record] = []
        var active = 0
        var mostAtOnce = 0
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
        var heldWaiters = CountWaiters()
        var stopping = false
        var files: [Int: CommonsFile] = [:]
    }

    let state = Mutex(State())

    init() {}

    /// The next API requests answer with these faults, one each, in order.
    public func failNextRequests(with faults: [CommonsFault]) { state.withLock { $0.faults += faults } }
    /// The next wider searches (`list=search`) answer with these faults, one each, in order,
    /// before any of ``failNextRequests(with:)``'s: for failures past the geosearch.
    public func failNextSearches(with faults: [CommonsFault]) { state.withLock { $0.searchFaults += faults } }
    /// Thumbnails answer with this status (nil: normally).
    public func failThumbnails(with status: Int?) { state.withLock { $0.thumbnailStatus = status } }
    /// Every answer waits this long first, so that requests overlap and a client's limit on
    /// requests at once shows.
    public func answerAfter(_ latency: Duration) { state.withLock { $0.latency = latency } }
    /// From now on every request waits, counted as being answered, until ``releaseHeld()``: a
    /// test sees how many a client has in flight at once, whatever the machine's speed.
    public func holdRequests() { state.withLock { $0.holding = true } }
    /// How many requests are waiting now.
    public var heldRequests: Int { state.withLock { $0.held.count } }
    /// Returns once `count` requests are waiting (or the double stops).
    public func heldRequests(reach count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                state.stopping || state.heldWaiters.enlist(continuation, for: count, current: state.held.count)
            }
            if now { continuation.resume() }
        }
    }
    /// Lets the requests waiting now go on (later ones wait in turn); returns how many.
    @discardableResult
    public func releaseHeld() -> Int {
        let released = state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
        for continuation in released { continuation.resume() }
        return released.count
    }

    public var records: [Record] { state.withLock { $0.records } }
    /// The most requests (API and thumbnails) it was answering at one time.
    public var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }

    func record(_ record: Record) -> CommonsFault? {
        state.withLock { state in
            state.records.append(record)
            if record.kind == "search", !state.searchFaults.isEmpty { return state.searchFaults.removeFirst() }
            return record.kind == "thumbnail" || state.faults.isEmpty ? nil : state.faults.removeFirst()
        }
    }

    func remember(_ files: [CommonsFile]) {
        state.withLock { state in for file in files { state.files[file.pageID] = file } }
    }

    func knownFiles(_ ids: [Int]) -> [CommonsFile] {
        state.withLock { state in ids.compactMap { state.files[$0] } }
    }

    var thumbnailStatus: Int? { state.withLock { $0.thumbnailStatus } }

    func answering<T>(_ answer: () async -> T) async -> T {
        let latency = state.withLock { state in
            state.active += 1
            state.mostAtOnce = max(state.mostAtOnce, state.active)
            return state.latency
        }
        await delay(latency)
        await passHold()
        let result = await answer()
        state.withLock { $0.active -= 1 }
        return result
    }

    func delay(_ duration: Duration) async {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end, !state.withLock({ $0.stopping }) {
            try? await Task.sleep(for: min(.milliseconds(20), end - ContinuousClock.now))
        }
    }

    /// Waits while requests are held (``holdRequests()``), unless the double is stopping.
    private func passHold() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (proceed, due) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                guard state.holding, !state.stopping else { return (true, []) }
                state.held.append(continuation)
                return (false, state.heldWaiters.reached(state.held.count))
            }
            if proceed { continuation.resume() }
            for waiter in due { waiter.resume() }
        }
    }

    func stop() {
        let waiters = state.withLock { state in
            state.stopping = true
            return state.heldWaiters.all()
        }
        for waiter in waiters { waiter.resume() }
        releaseHeld()
    }
}
