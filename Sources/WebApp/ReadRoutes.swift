import BlobStore
import Hummingbird
import NIOCore
import VirtualTourist

/// The routes that read: the state now or at any sequence number (time travel), one pin's
/// album, pages of the log, the difference between two points, live updates, and photos by
/// digest. Time travel reads through a ``StoreReader`` (snapshots, then a short replay).
struct ReadRoutes: Sendable {
    let store: TouristStore
    let live: LiveUpdates
    let config: ConfigJSON
    let replication: (@Sendable () -> ReplicationView)?
    static let maxEventsPerPage: UInt64 = 1_000

    func add(to router: some RouterMethods<BasicRequestContext>) {
        router.get("/api/config") { _, _ in WebResponses.json(config) }
        router.get("/api/state") { request, _ in try mapState(request) }
        router.get("/api/pins/:pin") { request, context in try pin(request, context) }
        router.get("/api/pins/:pin/news") { _, context in try albumNews(context) }
        router.get("/api/events") { request, _ in try events(request) }
        router.get("/api/diff") { request, _ in try difference(request) }
        router.get("/api/live") { _, _ in liveStream() }
        router.get("/api/replication") { _, _ in try replicationStatus() }
        router.get("/photos/:digest") { request, context in try photo(request, context) }
    }

    /// GET /api/state[?at=SEQ]
    func mapState(_ request: Request) throws -> Response {
        let (state, last) = try state(at: RequestValues.number("at", in: request))
        return WebResponses.jsonLine { try MapJSON.line(state, last: last) }
    }

    /// GET /api/pins/ID[?at=SEQ]
    func pin(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let id = try RequestValues.pin(context)
        let at = try RequestValues.number("at", in: request)
        let (state, _) = try state(at: at)
        guard let pin = state.pins[id] else {
            let when = at.map { " after event \($0)" } ?? ""
            throw WebError(.notFound, "unknown-pin", "there is no pin \(id) on the map\(when)")
        }
        return WebResponses.json(PinJSON(pin, localDevice: state.localDevice))
    }

    /// GET /api/pins/ID/news — what other devices did to the album that this device had not
    /// seen when it last acted on the pin (empty lists for a store of one device).
    func albumNews(_ context: BasicRequestContext) throws -> Response {
        let id = try RequestValues.pin(context)
        guard store.state.pins[id] != nil else { throw WebError(.notFound, "unknown-pin", "there is no pin \(id) on the map") }
        let reader = try readerNow()
        do {
            return WebResponses.json(AlbumNewsJSON(pin: id, news: try reader.albumNews(for: id), devices: try reader.devices()))
        } catch let error as DomainError {
            throw WebError(error)
        }
    }

    /// GET /api/events?from=SEQ&limit=N[&type=A,B][&pin=ID] — events in order from `from`; in a
    /// store of several devices, with the devices and where two acted at once.
    func events(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        let from = max(1, try RequestValues.number("from", in: request) ?? 1)
        let limit = try RequestValues.number("limit", in: request, max: Self.maxEventsPerPage) ?? 200
        guard limit > 0 else { throw WebError.badRequest("limit must be 1 to \(Self.maxEventsPerPage)") }
        var types: Set<String>?
        if let text = query["type"], !text.isEmpty {
            let names = text.split(separator: ",").map(String.init)
            for name in names where !DomainEvent.typeNames.contains(name) {
                throw WebError.badRequest("there is no event type \(RequestValues.quoted(name)); the types are \(DomainEvent.typeNames.joined(separator: ", "))")
            }
            types = Set(names)
        }
        var pin: PinID?
        if let text = query["pin"] {
            guard let id = PinID(parsing: String(text).lowercased()) else {
                throw WebError.badRequest("a pin id is 16 hexadecimal digits (got \(RequestValues.quoted(String(text))))")
            }
            pin = id
        }
        let reader = try readerNow()
        var page = EventPageJSON(events: [], last_seq: reader.lastSequence, next: nil)
        var found: [RecordedEvent] = []
        // Read in stretches, so a page with a filter that matches rarely still ends, and one
        // that fills early reads no further than it must.
        var start = from
        let stretch: UInt64 = 512
        do {
            while start <= reader.lastSequence && page.next == nil {
                let end = min(reader.lastSequence, start + stretch - 1)
                try reader.forEachEvent(from: start, through: end) { recorded in
                    guard page.next == nil else { return }
                    if let types, !types.contains(recorded.event.typeName) { return }
                    if let pin, recorded.event.pin != pin { return }
                    if found.count == Int(limit) { page.next = recorded.sequence } else { found.append(recorded) }
                }
                start = end + 1
            }
            let atOnce = try reader.actedAtOnce(found)
            page.events = found.map { PageEventJSON(event: EventJSON($0), atOnceWith: atOnce[$0.sequence]?.map(\.description)) }
            let devices = try reader.devices()
            if !devices.isEmpty { page.devices = devices.map(DeviceJSON.init) }
        } catch let error as DomainError {
            throw WebError(error)
        }
        return WebResponses.json(page)
    }

    /// GET /api/diff?from=A&to=B
    func difference(_ request: Request) throws -> Response {
        guard let from = try RequestValues.number("from", in: request), let to = try RequestValues.number("to", in: request) else {
            throw WebError.badRequest("give both from and to (sequence numbers)")
        }
        let reader = try readerNow()
        do {
            // Written by hand, the same bytes as the encoder's (docs/BENCHMARKS-JOURNAL.md, "vt diff
            // --json of far points").
            let line = try StateDiffJSON.line(try reader.difference(from: from, to: to))
            return WebResponses.bytes(line, type: "application/json; charset=utf-8")
        } catch let error as DomainError { throw WebError(error) }
    }

    /// GET /api/replication — how replication stands (``ReplicationView``); 404 when the store
    /// is neither replicated nor a replica.
    func replicationStatus() throws -> Response {
        guard let replication else {
            throw WebError.notFound("this store is not replicated (start with vt serve --replicate nats://…, or --follow)")
        }
        return WebResponses.json(replication())
    }

    /// GET /api/live — server-sent events (``LiveUpdates``).
    func liveStream() -> Response {
        let frames = live.subscribe()
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            for await frame in frames { try await writer.write(ByteBuffer(string: frame)) }
            try await writer.finish(nil)
        })
    }

    /// GET /photos/DIGEST — a photo's bytes. Named by their SHA-256, they never change: cached
    /// for a year, and an `If-None-Match` of the same digest is answered 304.
    func photo(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let text = context.parameters.get("digest") ?? ""
        guard text.utf8.count == 64, let digest = BlobDigest(hex: text.lowercased()) else {
            throw WebError.badRequest("a photo digest is 64 hexadecimal digits (got \(RequestValues.quoted(text)))")
        }
        let tag = "\"\(digest)\""
        if request.headers[.ifNoneMatch] == tag {
            var headers = HTTPFields()
            headers[.eTag] = tag
            headers[.cacheControl] = Self.immutable
            return Response(status: .notModified, headers: headers)
        }
        let bytes: [UInt8]?
        do { bytes = try store.photoBytes(digest) } catch let error as DomainError { throw WebError(error) }
        guard let bytes else {
            throw WebError.notFound("photo \(digest) is not stored (never downloaded, or collected since it left every album)")
        }
        let type = MediaType.sniff(bytes)?.rawValue ?? "application/octet-stream"
        var response = WebResponses.bytes(bytes, type: type, cache: Self.immutable)
        response.headers[.eTag] = tag
        return response
    }

    static let immutable = "public, max-age=31536000, immutable"

    /// The state now (from the store, no I/O) or after event `at` (from the log).
    private func state(at: UInt64?) throws -> (TouristState, UInt64) {
        let now = store.state
        guard let at, at != now.sequence else { return (now, now.sequence) }
        // The reader refuses a sequence number past the log's end (invalid-argument).
        do { return (try store.state(at: at), now.sequence) } catch let error as DomainError { throw WebError(error) }
    }

    private func readerNow() throws -> StoreReader {
        do { return try store.reader() } catch let error as DomainError { throw WebError(error) }
    }
}
