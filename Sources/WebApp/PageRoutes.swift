import Foundation
import HTTPTypes
import Hummingbird

/// The pages and their files: the map (/), the album (/album?pin=ID), time travel (/time),
/// their scripts and styles (/assets/NAME), and Leaflet's files (/leaflet/…) from the folder
/// Debian's libjs-leaflet installs.
struct PageRoutes: Sendable {
    struct Asset: Sendable {
        var bytes: [UInt8]
        var type: String
    }

    let assets: [String: Asset]
    let leafletFolder: String
    let contentSecurityPolicy: String

    static let pages = ["/": "map.html", "/album": "album.html", "/time": "time.html"]
    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "png": "image/png", "svg": "image/svg+xml", "map": "application/json",
    ]

    /// Loads the pages' files, which ship with the program (the WebApp module's resources).
    init(tileURL: String?, leafletFolder: String) throws {
        guard let folder = Bundle.module.url(forResource: "Assets", withExtension: nil) else {
            throw WebServerError("the web pages' files are missing from the program's resources (rebuild it)")
        }
        var assets: [String: Asset] = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            assets[name] = Asset(bytes: Array(data), type: Self.type(of: name))
        }
        for page in Self.pages.values where assets[page] == nil {
            throw WebServerError("the page \(page) is missing from the program's resources (rebuild it)")
        }
        self.assets = assets
        self.leafletFolder = leafletFolder
        var images = "'self' data:"
        if let tileURL, let tiles = URL(string: tileURL.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
            let scheme = tiles.scheme, let host = tiles.host
        {
            // Tile hosts with a {s} subdomain become a wildcard.
            let shownHost = tileURL.contains("{s}.") ? "*." + host.drop { $0 != "." }.dropFirst() : host
            images += " \(scheme)://\(shownHost)\(tiles.port.map { ":\($0)" } ?? "")"
        }
        contentSecurityPolicy = "default-src 'self'; img-src \(images); style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    }

    func add(to router: some RouterMethods<BasicRequestContext>) {
        for (path, name) in Self.pages {
            router.get(RouterPath(path)) { _, _ in try page(name) }
        }
        // Browsers ask for it unprompted; a pin is the icon (no body: nothing to load).
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        router.get("/assets/:name") { _, context in try asset(context.parameters.get("name") ?? "") }
        router.get("/leaflet/**") { _, context in try leaflet(context.parameters.getCatchAll().joined(separator: "/")) }
    }

    private func page(_ name: String) throws -> Response {
        guard let asset = assets[name] else { throw WebError.notFound("there is no page \(name)") }
        var response = WebResponses.bytes(asset.bytes, type: asset.type, cache: "no-cache")
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return response
    }

    private func asset(_ name: String) throws -> Response {
        guard !name.hasSuffix(".html"), let asset = assets[name] else { throw WebError.notFound("there is no file \(name)") }
        return WebResponses.bytes(asset.bytes, type: asset.type, cache: "no-cache")
    }

    /// Files under the Leaflet folder only: names of letters, digits, '-', '_' and '.', no
    /// hidden files, no way up.
    private func leaflet(_ path: String) throws -> Response {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let allowed = parts.allSatisfy { part in
            !part.isEmpty && !part.hasPrefix(".")
                && part.utf8.allSatisfy { $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
        }
        guard allowed, let data = FileManager.default.contents(atPath: leafletFolder + "/" + path) else {
            throw WebError.notFound("there is no Leaflet file \(RequestValues.quoted(path))")
        }
        return WebResponses.bytes(Array(data), type: Self.type(of: path), cache: "public, max-age=86400")
    }

    static func type(of name: String) -> String {
        types[String(name.split(separator: ".").last ?? "")] ?? "application/octet-stream"
    }
}

extension UInt8 {
    fileprivate var isASCIILetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
