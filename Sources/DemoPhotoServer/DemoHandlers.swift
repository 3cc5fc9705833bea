import Hummingbird
import NIOCore

/// The demo server's answers. Flickr's rules are followed where they matter to a client: JSON
/// with `stat`, ids and totals as strings, at most 250 photos a page for a geo search, nothing
/// past the first 4,000 results, a photo's URL only for the sizes asked for in `extras`.
struct DemoHandlers: Sendable {
    let catalogue: DemoCatalogue
    let controls: DemoServerControls
    let requiredKey: String?
    /// `http://HOST:PORT`, known once the server listens.
    let origin: @Sendable () -> String

    /// The demo's photos are generated: its one licence says so, and each photo's page too.
    static let generatedLicenceID = "0"
    static let ownerName = "Offline demo service (generated image)"

    func search(_ request: Request) async -> Response {
        let query = request.uri.queryParameters
        if query["method"].map(String.init) == "flickr.photos.licenses.getInfo" {
            return Self.json(
                "{\"licenses\":{\"license\":[{\"id\":\(Self.generatedLicenceID),\"name\":\"Generated image, no rights reserved\","
                    + "\"url\":\"\"}]},\"stat\":\"ok\"}")
        }
        let latitude = query["lat"].flatMap { Double(String($0)) }
        let longitude = query["lon"].flatMap { Double(String($0)) }
        let perPage = min(250, max(1, query["per_page"].flatMap { Int(String($0)) } ?? 100))
        let page = max(1, query["page"].flatMap { Int(String($0)) } ?? 1)
        let extras = query["extras"].map(String.init) ?? ""
        let record = DemoServerControls.SearchRecord(
            latitude: latitude, longitude: longitude, page: page, perPage: perPage, extras: extras)
        let fault = controls.nextSearchFault(recording: record)
        if case .delay(let duration) = fault { await controls.delay(duration) }
        if case .held = fault { await controls.holdSearch() }

        let body: String
        if query["method"].map(String.init) != "flickr.photos.search" {
            body = Self.failure(112, "Method \"\(query["method"].map(String.init) ?? "")\" not found")
        } else if let key = query["api_key"].map(String.init), !key.isEmpty, requiredKey == nil || key == requiredKey {
            if let latitude, let longitude {
                if latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) {
                    body = listing(latitude: latitude, longitude: longitude, page: page, perPage: perPage, extras: extras)
                } else {
                    body = Self.failure(4, "Not a valid latitude or longitude")
                }
            } else {
                body = Self.failure(3, "Parameterless searches have been disabled. Please use flickr.photos.getRecent instead.")
            }
        } else {
            body = Self.failure(100, "Invalid API Key (Key has invalid format)")
        }
        if case .statFail(let code, let message) = fault { return Self.json(Self.failure(code, message)) }
        return Self.answer(Array(body.utf8), contentType: "application/json; charset=utf-8", fault: fault)
    }

    func image(named name: String, request: Request) async -> Response {
        // name: ID_SIZE.png
        guard name.hasSuffix(".png"), let underscore = name.lastIndex(of: "_") else { return Self.notFound() }
        let id = String(name[..<underscore])
        let size = String(name[name.index(after: underscore)...].dropLast(4))
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), id.count <= 20,
            let dimensions = DemoPhotoServer.sizes[size]
        else { return Self.notFound() }
        let fault = controls.imageFault(for: id)
        await controls.passImageGate()
        if case .delay(let duration) = fault { await controls.delay(duration) }
        let png = catalogue.image(photoID: id, width: dimensions.width, height: dimensions.height)
        var response = Self.answer(png, contentType: "image/png", fault: fault)
        if fault == nil { response.headers[.cacheControl] = "public, max-age=31536000, immutable" }
        return response
    }

    private func listing(latitude: Double, longitude: Double, page: Int, perPage: Int, extras: String) -> String {
        let total = catalogue.photoCount(latitude: latitude, longitude: longitude)
        let pages = (total + perPage - 1) / perPage
        let sizes = extras.split(separator: ",").compactMap { item -> String? in
            let name = String(item.filter { $0 != " " })
            guard name.hasPrefix("url_"), DemoPhotoServer.sizes[String(name.dropFirst(4))] != nil else { return nil }
            return String(name.dropFirst(4))
        }
        let photos = catalogue.photos(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
        let base = origin()
        let entries = photos.map { photo -> String in
            var fields = [
                "\"id\":\"\(photo.id)\"", "\"owner\":\"12345678@N00\"", "\"secret\":\"\(photo.id.suffix(10))\"",
                "\"server\":\"65535\"", "\"farm\":66", "\"title\":\(JSONText.quoted(photo.title))",
                "\"ispublic\":1", "\"isfriend\":0", "\"isfamily\":0",
            ]
            if extras.contains("owner_name") { fields.append("\"ownername\":\(JSONText.quoted(Self.ownerName))") }
            if extras.contains("license") { fields.append("\"license\":\"\(Self.generatedLicenceID)\"") }
            for size in sizes {
                let (width, height) = DemoPhotoServer.sizes[size]!
                // Flickr has sent sizes both as numbers and as strings; so does this server.
                let w = photo.index % 2 == 0 ? "\(width)" : "\"\(width)\""
                let h = photo.index % 2 == 0 ? "\(height)" : "\"\(height)\""
                fields += [
                    "\"url_\(size)\":\"\(base)/images/\(photo.id)_\(size).png\"", "\"width_\(size)\":\(w)",
                    "\"height_\(size)\":\(h)",
                ]
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
        return "{\"photos\":{\"page\":\(page),\"pages\":\(pages),\"perpage\":\(perPage),\"total\":\"\(total)\","
            + "\"photo\":[" + entries.joined(separator: ",") + "]},\"stat\":\"ok\"}"
    }

    /// A photo's own page: what the credit links to.
    func photoPage(owner: String, id: String) -> Response {
        guard !id.isEmpty, id.count <= 20, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return Self.notFound() }
        let html = "<!DOCTYPE html><html><head><title>Demo photo \(id)</title></head><body><p>Photo \(id) of the offline"
            + " demo photo service: a generated image, not a real photograph; no rights reserved.</p></body></html>\n"
        var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        response.headers[.contentType] = "text/html; charset=utf-8"
        return response
    }

    static func failure(_ code: Int, _ message: String) -> String {
        "{\"stat\":\"fail\",\"code\":\(code),\"message\":\(JSONText.quoted(message))}"
    }

    static func json(_ text: String) -> Response {
        answer(Array(text.utf8), contentType: "application/json; charset=utf-8", fault: nil)
    }

    static func notFound() -> Response {
        var response = Response(status: .notFound, body: ResponseBody(byteBuffer: ByteBuffer(string: "not found\n")))
        response.headers[.contentType] = "text/plain; charset=utf-8"
        return response
    }

    /// The normal answer, or what the fault makes of it.
    static func answer(_ bytes: [UInt8], contentType: String, fault: DemoFault?) -> Response {
        var status = HTTPResponse.Status.ok
        var body = bytes
        var type = contentType
        switch fault {
        case .httpStatus(let code):
            status = HTTPResponse.Status(code: code)
            body = Array("the demo service was told to fail with HTTP \(code)\n".utf8)
            type = "text/plain; charset=utf-8"
        case .truncated:
            body = Array(bytes.prefix(bytes.count / 2))
        case .html:
            body = Array(
                "<!DOCTYPE html><html><head><title>Sign in to the network</title></head><body><p>Please sign in.</p></body></html>\n".utf8)
            type = "text/html; charset=utf-8"
        case .cutConnection:
            let half = ByteBuffer(bytes: bytes.prefix(bytes.count / 2))
            var response = Response(
                status: .ok,
                body: ResponseBody(contentLength: bytes.count) { writer in
                    try await writer.write(half)
                    throw ConnectionCut()
                })
            response.headers[.contentType] = contentType
            return response
        case .delay, .held, .statFail, nil:
            break
        }
        var response = Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        response.headers[.contentType] = type
        return response
    }

    struct ConnectionCut: Error {}
}
