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
        guard WhyQuestion.kinds.contains(fact) else {
            throw WebError.badRequest("fact must be pin, album, new-collection, photo or region (got \(RequestValues.quoted(fact)))")
        }
        if fact == "region" { return .region }
        let text = query["pin"].map(String.init) ?? ""
        guard let pin = PinID(parsing: text.lowercased()) else {
            throw WebError.badRequest("pin must be a pin id: 16 hexadecimal digits (got \(RequestValues.quoted(text)))")
        }
        let slot = fact == "photo" ? try RequestValues.number("slot", in: request, max: UInt64(UInt32.max)).map(UInt32.init) : nil
        guard let question = WhyQuestion(kind: fact, pin: pin, slot: slot) else {
            throw WebError.badRequest("a photo's question needs its slot (slot=N)")
        }
        return question
    }
}
