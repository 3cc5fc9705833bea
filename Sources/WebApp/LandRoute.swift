import Foundation
import HTTPTypes
import Hummingbird
import Places

/// GET /land.json: the countries' outlines (Natural Earth 1:110m, about 50 KB gzip-compressed)
/// that the map draws when it has no tiles. Sent as stored, gzip-compressed, to every client
/// that takes gzip (all browsers); cached for a day and revalidated by ETag, so a page
/// downloads it once.
struct LandRoute: Sendable {
    /// The ETag: a hash of the file, so a new build with new data is fetched anew.
    let tag: String
    let compressed: [UInt8]

    init() throws {
        do {
            compressed = try LandMap.gzipJSON()
        } catch {
            throw WebServerError("the map's land outlines are missing: \(error)")
        }
        // FNV-1a: the tag need not be secret, only change when the bytes do.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in compressed { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        tag = "\"land-\(String(hash, radix: 16))\""
    }

    func add(to router: some RouterMethods<BasicRequestContext>) {
        router.get("/land.json") { request, _ in try land(request) }
    }

    func land(_ request: Request) throws -> Response {
        let cache = "public, max-age=86400"
        if let asked = request.headers[.ifNoneMatch], asked.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag }) {
            var response = Response(status: .notModified)
            response.headers[.eTag] = tag
            response.headers[.cacheControl] = cache
            return response
        }
        let acceptsGzip = (request.headers[.acceptEncoding] ?? "").lowercased().contains("gzip")
        var response = WebResponses.bytes(acceptsGzip ? compressed : try LandMap.json(), type: "application/json", cache: cache)
        if acceptsGzip { response.headers[.contentEncoding] = "gzip" }
        response.headers[.eTag] = tag
        response.headers[.vary] = "Accept-Encoding"
        return response
    }
}
