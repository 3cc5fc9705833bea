import DemoPhotoServer
import Dispatch
import Hummingbird
import NIOCore

/// The Commons double's answers, in the Action API's format version 1 (the default): `pages`
/// keyed by page id, booleans as empty strings, metadata values as HTML.
struct CommonsDoubleHandlers: Sendable {
    typealias File = CommonsFile
    let catalogue: DemoCatalogue
    let controls: CommonsDoubleControls
    let origin: @Sendable () -> String

    /// The widths Commons serves thumbnails at; a request for another is rounded up, a URL
    /// built by hand for another is refused.
    static let standardWidths = [120, 250, 330, 500, 960, 1280, 1920]
    static let thumbnailsPerRequest = 50
    static let maxHits = 500

    /// Every file of the place, nearest first: a geosearch names the first 500, the wider
    /// search (`list=search` with `nearcoord:`) all of them.
    func files(latitude: Double, longitude: Double) -> [File] {
        let count = catalogue.photoCount(latitude: latitude, longitude: longitude)
        // Page ids are unique on a wiki; folding the catalogue's ids into a realistic range can
        // make two of a large place meet, so a repeated one moves to the next free id.
        var taken = Set<Int>()
        return catalogue.photos(latitude: latitude, longitude: longitude, page: 1, perPage: max(1, count), served: count).map { photo in
            var pageID = Int(photo.id)! % 900_000_000 + 1
            while !taken.insert(pageID).inserted { pageID += 1 }
            let (suffix, mime): (String, String) =
                switch photo.index % 10 {
                case 3: ("svg", "image/svg+xml")
                case 6: ("pdf", "application/pdf")
                case 8: ("webm", "video/webm")
                case 5: ("png", "image/png")
                default: ("jpg", "image/jpeg")
                }
            return File(pageID: pageID, index: photo.index, name: "Demo photo \(photo.index + 1).\(suffix)", mime: mime)
        }
    }

    func api(_ request: Request) async -> Response {
        let query = Dictionary(
            request.uri.queryParameters.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first })
        let userAgent = request.headers[.userAgent]
        let kind =
            switch (query["list"], query["prop"]) {
            case ("geosearch", _): "geosearch"
            case ("search", _): "search"
            case (_, "imageinfo"): "imageinfo"
            default: "other"
            }
        let fault = controls.record(.init(kind: kind, query: query, userAgent: userAgent))
        // Wikimedia's policy: a User-Agent that names the program and a way to reach its author.
        guard let userAgent, userAgent.contains("@") || userAgent.contains("http") else {
            return Self.text(403, "Please set a user-agent and respect our robot policy https://w.wiki/4wJS.\n")
        }
        switch fault {
        case .httpStatus(let status): return Self.text(status, "the Commons double was told to fail with HTTP \(status)\n")
        case .tooManyRequests(let seconds):
            var response = Self.text(429, "Too many requests\n")
            response.headers[.retryAfter] = String(seconds)
            return response
        case .maxlag(let seconds):
            var response = Self.error("maxlag", "Waiting for 10.64.48.23: \(seconds) seconds lagged.")
            response.headers[.retryAfter] = String(seconds)
            return response
        case .apiError(let code, let info): return Self.error(code, info)
        case .html:
            var response = Self.text(200, "<!DOCTYPE html><html><body><p>Wikimedia Error</p></body></html>\n")
            response.headers[.contentType] = "text/html; charset=utf-8"
            return response
        case .delay(let duration): await controls.delay(duration)
        case nil: break
        }
        guard query["action"] == "query", query["format"] == "json" else {
            return Self.error("badvalue", "Unrecognized value for parameter \"action\" or \"format\".")
        }
        switch kind {
        case "geosearch": return geosearch(query)
        case "search": return search(query)
        case "imageinfo": return imageInfo(query)
        default: return Self.json("{\"batchcomplete\":\"\"}")
        }
    }

    func geosearch(_ query: [String: String]) -> Response {
        let parts = (query["gscoord"] ?? "").split(separator: "|").map { Double($0) }
        guard parts.count == 2, let latitude = parts[0], let longitude = parts[1], (-90...90).contains(latitude),
            (-180...180).contains(longitude)
        else { return Self.error("invalid-coord", "Invalid coordinate provided.") }
        guard let radius = query["gsradius"].flatMap({ Int($0) }), (10...10_000).contains(radius) else {
            return Self.error("badinteger", "Invalid value for parameter \"gsradius\": must be between 10 and 10000.")
        }
        let limit = min(Self.maxHits, max(1, query["gslimit"].flatMap { Int($0) } ?? 10))
        let namespace = query["gsnamespace"] ?? "0"
        let hits = namespace == "6" ? Array(files(latitude: latitude, longitude: longitude).prefix(limit)) : []
        controls.remember(hits)
        let entries = hits.map { file in
            "{\"pageid\":\(file.pageID),\"ns\":6,\"title\":\(JSONText.quoted("File:" + file.name)),"
                + "\"lat\":\(latitude),\"lon\":\(longitude),\"dist\":\(Double(file.index) * 7.5),\"primary\":\"\"}"
        }
        return Self.json("{\"batchcomplete\":\"\",\"query\":{\"geosearch\":[" + entries.joined(separator: ",") + "]}}")
    }

    func imageInfo(_ query: [String: String]) -> Response {
        let ids = (query["pageids"] ?? "").split(separator: "|").compactMap { Int($0) }
        let requested = query["iiurlwidth"].flatMap { Int($0) }
        let width = requested.map { wanted in Self.standardWidths.first { $0 >= wanted } ?? Self.standardWidths.last! }
        let base = origin()
        var known: [Int: File] = [:]
        // A page id names a file of a place searched before (as on Commons, ids come from a
        // search); ids never handed out are missing pages.
        for file in controls.knownFiles(ids) { known[file.pageID] = file }
        var pages: [String] = []
        var missing = -1
        for (position, id) in ids.enumerated() {
            guard let file = known[id] else {
                pages.append("\"\(missing)\":{\"ns\":6,\"title\":\"File:Missing \(id).jpg\",\"missing\":\"\"}")
                missing -= 1
                continue
            }
            var info = [
                "\"size\":\(20_000 + file.index)", "\"width\":4000", "\"height\":3000",
                "\"url\":\"\(base)/original/\(file.pageID).jpg\"",
                "\"descriptionurl\":\"\(base)/wiki/File:\(file.name.replacingSpaces)\"",
                "\"descriptionshorturl\":\"\(base)/w/index.php?curid=\(file.pageID)\"", "\"mime\":\"\(file.mime)\"",
                "\"user\":\"Uploader \(file.index + 1)\"",
            ]
            // Thumbnails for the first 50 files only, as the API does.
            if let width, position < Self.thumbnailsPerRequest {
                info += [
                    "\"thumburl\":\"\(base)/thumb/\(file.pageID)/\(width)px-photo.png\"", "\"thumbwidth\":\(width)",
                    "\"thumbheight\":\(width * 3 / 4)",
                ]
            }
            info.append("\"extmetadata\":{" + Self.metadata(file).joined(separator: ",") + "}")
            pages.append(
                "\"\(file.pageID)\":{\"pageid\":\(file.pageID),\"ns\":6,\"title\":\(JSONText.quoted("File:" + file.name)),"
                    + "\"imagerepository\":\"local\",\"imageinfo\":[{" + info.joined(separator: ",") + "}]}")
        }
        let warning = ids.count > Self.thumbnailsPerRequest
            ? "\"warnings\":{\"imageinfo\":{\"*\":\"Only 50 thumbnails can be made in one request.\"}}," : ""
        return Self.json("{\"batchcomplete\":\"\"," + warning + "\"query\":{\"pages\":{" + pages.joined(separator: ",") + "}}}")
    }

    /// The credits, as Commons gives them: HTML, and not every field for every file.
    static func metadata(_ file: File) -> [String] {
        func entry(_ name: String, _ value: String) -> String {
            "\"\(name)\":{\"value\":\(JSONText.quoted(value)),\"source\":\"commons-desc-page\"}"
        }
        var fields = [entry("ObjectName", "Demo photo \(file.index + 1)")]
        if file.index % 5 != 0 {
            fields.append(entry(
                "Artist",
                "<a href=\"//commons.wikimedia.org/wiki/User:Photographer_\(file.index + 1)\" title=\"User:Photographer \(file.index + 1)\">"
                    + "Photographer \(file.index + 1) &amp; friends</a>"))
        }
        if file.index % 4 == 1 {
            fields.append(entry("LicenseShortName", "Public domain"))
        } else {
            fields.append(entry("LicenseShortName", "CC BY-SA 4.0"))
            fields.append(entry("LicenseUrl", "https://creativecommons.org/licenses/by-sa/4.0"))
        }
        if file.index % 3 != 0 {
            fields.append(entry("DateTimeOriginal", "2019-05-0\(file.index % 9 + 1) 12:00:00"))
        }
        return fields
    }

    func thumbnail(id: String, name: String, request: Request) async -> Response {
        _ = controls.record(.init(kind: "thumbnail", query: ["id": id, "name": name], userAgent: request.headers[.userAgent]))
        guard request.headers[.userAgent].map({ $0.contains("@") || $0.contains("http") }) == true else {
            return Self.text(403, "Please set a user-agent and respect our robot policy https://w.wiki/4wJS.\n")
        }
        if let status = controls.thumbnailStatus { return Self.text(status, "the Commons double was told to fail\n") }
        guard name.hasSuffix("px-photo.png"), let width = Int(name.prefix { $0.isNumber }), let pageID = Int(id) else {
            return Self.text(404, "not found\n")
        }
        guard Self.standardWidths.contains(width) else {
            return Self.text(400, "Use thumbnail steps listed on https://w.wiki/GHai\n")
        }
        // Made on a thread of its own: a large image is milliseconds of work that would
        // otherwise hold one of the cooperative pool's few threads (and every test beside it).
        let catalogue = catalogue
        let png = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(returning: catalogue.image(photoID: String(pageID), width: width, height: width * 3 / 4))
            }
        }
        var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: png)))
        response.headers[.contentType] = "image/png"
        return response
    }

    func filePage(_ title: String) -> Response {
        var response = Response(
            status: .ok,
            body: ResponseBody(byteBuffer: ByteBuffer(string: "<!DOCTYPE html><html><body><h1>\(title.prefix(100).filter { $0 != "<" })</h1></body></html>\n")))
        response.headers[.contentType] = "text/html; charset=utf-8"
        return response
    }

    static func error(_ code: String, _ info: String) -> Response {
        json("{\"error\":{\"code\":\(JSONText.quoted(code)),\"info\":\(JSONText.quoted(info)),\"*\":\"See /w/api.php for API usage.\"},\"servedby\":\"mw-api-double\"}")
    }

    static func json(_ text: String) -> Response {
        var response = Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        response.headers[.contentType] = "application/json; charset=utf-8"
        return response
    }

    static func text(_ status: Int, _ text: String) -> Response {
        var response = Response(status: HTTPResponse.Status(code: status), body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        response.headers[.contentType] = "text/plain; charset=utf-8"
        return response
    }
}

extension String {
    var replacingSpaces: String { String(map { $0 == " " ? "_" : $0 }) }
}

/// One file of a place: its page id, name and type. Among them, as on Commons, files that are
/// not photos: a drawing (SVG), a document (PDF) and a video (WebM).
struct CommonsFile: Sendable {
    var pageID: Int
    var index: Int
    var name: String
    var mime: String
}
