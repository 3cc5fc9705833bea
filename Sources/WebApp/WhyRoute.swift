import Explanations
import Hummingbird
import VirtualTourist

/// GET /api/why?fact=pin|album|new-collection|photo|region[&pin=ID][&slot=N][&at=SEQ]: the
/// events behind a fact (docs/WHY.md), as `vt why --json` gives them. The album and the
/// time-travel page ask it when a person presses "Why?".
struct WhyRoute: Sendable {
    let store: TouristStore

    func add(to router: some RouterMethods<BasicRequestContext>) {
        router.get("/api/why") { request, _ in try answer(request) }
    }

    func answer(_ request: Request) throws -> Response {
        let question = try Self.question(request)
        let at = try RequestValues.number("at", in: request)
        do {
            let reader = try store.reader()
            let names = reader.hasSeveralDevices ? try Explainer.deviceNames(store: store.folder) : [:]
            return WebResponses.json(WhyJSON(try Explainer(reader: reader, names: names).answer(question, at: at)))
        } catch let error as DomainError {
            throw WebError(error)
        }
    }

    static func question(_ request: Request) throws -> WhyQuestion {
        let query = request.uri.queryParameters
        let fact = query["fact"].map(String.init) ?? ""
        if fact == "region" { return .region }
        guard ["pin", "album", "new-collection", "photo"].contains(fact) else {
            throw WebError.badRequest("fact must be pin, album, new-collection, photo or region (got \(RequestValues.quoted(fact)))")
        }
        let text = query["pin"].map(String.init) ?? ""
        guard let pin = PinID(parsing: text.lowercased()) else {
            throw WebError.badRequest("pin must be a pin id: 16 hexadecimal digits (got \(RequestValues.quoted(text)))")
        }
        switch fact {
        case "pin": return .pin(pin)
        case "album": return .album(pin)
        case "new-collection": return .newCollection(pin)
        default:
            guard let slot = try RequestValues.number("slot", in: request, max: UInt64(UInt32.max)) else {
                throw WebError.badRequest("a photo's question needs its slot (slot=N)")
            }
            return .photo(pin, slot: UInt32(slot))
        }
    }
}
