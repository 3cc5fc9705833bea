import AlbumPipeline
import Hummingbird
import RequestReading
import VirtualTourist

/// The routes that change things: each is one store action, checked by the store's rules
/// (a refusal changes nothing and answers with its status), and each answers with what the
/// page shows next.
struct ActionRoutes: Sendable {
    let store: TouristStore
    let pipeline: AlbumPipeline
    let bodyLimit: Int

    func add(to router: some RouterMethods<BasicRequestContext>) {
        router.post("/api/pins") { request, _ in try await dropPin(request) }
        router.post("/api/pins/:pin/drag") { request, context in try await dragPin(request, context) }
        router.delete("/api/pins/:pin") { _, context in try await removePin(context) }
        router.post("/api/pins/:pin/forget") { _, context in try await forgetPlace(context) }
        router.post("/api/pins/:pin/album") { _, context in try await openAlbum(context) }
        router.post("/api/pins/:pin/new-collection") { _, context in try await newCollection(context) }
        router.post("/api/pins/:pin/retry") { _, context in try await retry(context) }
        router.delete("/api/pins/:pin/photos/:slot") { request, context in try await removePhoto(request, context) }
        router.put("/api/region") { request, _ in try await changeRegion(request) }
    }

    func dropPin(_ request: Request) async throws -> Response {
        let place = try await RequestValues.body(PlaceBody.self, of: request, limit: bodyLimit).coordinate
        let pin = try await WebResponses.refusing { try await store.dropPin(at: place) }
        return try pinAnswer(pin, status: .created)
    }

    func dragPin(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        let place = try await RequestValues.body(PlaceBody.self, of: request, limit: bodyLimit).coordinate
        try await WebResponses.refusing { _ = try await store.dragPin(pin, to: place) }
        return try pinAnswer(pin)
    }

    func removePin(_ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        try await WebResponses.refusing { _ = try await store.removePin(pin) }
        return WebResponses.json(["removed": pin.description])
    }

    /// POST /api/pins/ID/forget — erases the place from the whole history (docs/EVENTS.md,
    /// "Forgetting a place"); the page asked the person first.
    func forgetPlace(_ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        let report = try await WebResponses.refusing { try await store.forget(pin) }
        return WebResponses.json(ForgottenJSON(
            forgotten: report.pin.description, seq: report.sequence, erased_events: report.erasedEvents,
            photos_deleted: report.photosDeleted,
            receipt: report.receipt.map { TouristStore.receiptsFolderName + "/" + ($0.split(separator: "/").last.map(String.init) ?? $0) }))
    }

    func openAlbum(_ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        try await WebResponses.refusing { _ = try await pipeline.open(pin) }
        return try pinAnswer(pin)
    }

    func newCollection(_ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        try await WebResponses.refusing { _ = try await pipeline.newCollection(for: pin) }
        return try pinAnswer(pin)
    }

    func retry(_ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        try await WebResponses.refusing { try await pipeline.retry(pin) }
        return try pinAnswer(pin)
    }

    /// DELETE /api/pins/ID/photos/SLOT?collection=C — the collection the page showed, so a tap
    /// on a photo of a collection replaced meanwhile removes nothing.
    func removePhoto(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let pin = try RequestValues.pin(context)
        let text = context.parameters.get("slot") ?? ""
        guard let slot = UInt32(text) else {
            throw WebError.badRequest("a photo's slot is a whole number from 0 to \(UInt32.max) (got \(RequestValues.quoted(text)))")
        }
        let collection = try RequestValues.number("collection", in: request, max: UInt64(UInt32.max)).map { UInt32($0) }
        try await WebResponses.refusing { _ = try await store.removePhoto(slot, from: pin, collection: collection) }
        return try pinAnswer(pin)
    }

    /// PUT /api/region — the map settled here. The same region again appends nothing.
    func changeRegion(_ request: Request) async throws -> Response {
        let region = try await RequestValues.body(RegionBody.self, of: request, limit: bodyLimit).region
        if store.state.region != region {
            try await WebResponses.refusing { _ = try await store.changeRegion(to: region) }
        }
        return WebResponses.json(RegionJSON(region))
    }

    private func pinAnswer(_ pin: PinID, status: HTTPResponse.Status = .ok) throws -> Response {
        guard let now = store.state.pins[pin] else { throw WebError(.notFound, "unknown-pin", "pin \(pin) was removed meanwhile") }
        return WebResponses.json(PinJSON(now, localDevice: store.localDevice), status: status)
    }
}

struct ForgottenJSON: Encodable {
    var forgotten: String
    var seq: UInt64
    var erased_events: UInt64
    var photos_deleted: Int
    /// The erasure receipt's file in the store (docs/PROOFS.md, "Erasure receipts"), when written.
    var receipt: String?
}
