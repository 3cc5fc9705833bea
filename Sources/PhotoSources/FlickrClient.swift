import Foundation

/// The client of Flickr's REST API: `flickr.photos.search` near a place. Nothing else lives
/// in this type; images are fetched by ``ImageDownloader``.
///
/// ```swift
/// let flickr = FlickrClient(key: try FlickrAPIKey("…"))
/// let page = try await flickr.search(latitude: 48.8584, longitude: 2.2945, page: 1, perPage: 21)
/// page.photos.first?.url     // https://live.staticflickr.com/…_m.jpg
/// ```
public struct FlickrClient: Sendable {
    /// Flickr's REST endpoint.
    public static let defaultEndpoint = "https://api.flickr.com/services/rest/"
    /// Where a photo's own page is: `/photos/{owner}/{id}` under this.
    public static let defaultPhotoPages = FlickrResponse.defaultPhotoPages
    /// The extras that credit a photo: its owner's name, its licence id, when it was taken.
    public static let creditExtras = ["owner_name", "license", "date_taken"]
    /// The environment variable that points the client at another endpoint (the demo server).
    public static let endpointVariable = "VT_FLICKR_ENDPOINT"
    /// Geo searches return at most 250 photos a page.
    public static let maxPerPage = 250
    /// Flickr's geo search radius is under 32 km.
    public static let maxRadiusKilometres = 32.0
    /// Without a limiting parameter a geo search returns only photos from the last 12 hours
    /// (the API's documentation of `flickr.photos.search`); this minimum upload date,
    /// 2004-01-01 (before Flickr began), limits nothing and lifts that restriction.
    public static let minimumUploadDate = 1_072_915_200

    public let endpoint: String
    let key: FlickrAPIKey
    /// The search radius, in kilometres (0 < radius < 32).
    public let radiusKilometres: Double
    /// The image sizes asked for as `extras`, most wanted first.
    public let sizes: [String]
    public let timeout: Duration

    public init(
        key: FlickrAPIKey, endpoint: String = defaultEndpoint, radiusKilometres: Double = 5,
        sizes: [String] = ["url_m", "url_q"], timeout: Duration = .seconds(20)
    ) {
        self.key = key
        self.endpoint = endpoint
        self.radiusKilometres = radiusKilometres
        self.sizes = sizes
        self.timeout = timeout
    }

    /// One page of public, safe photos within ``radiusKilometres`` of a place.
    ///
    /// - Throws: ``PhotoSourceError``: `.invalidArgument` before anything is sent for a bad
    ///   coordinate, page or page size; otherwise what the service or the network did.
    public func search(
        latitude: Double, longitude: Double, page: Int, perPage: Int, licences: [String: FlickrLicence] = [:]
    ) async throws(PhotoSourceError) -> PhotoSearchPage {
        let url = try searchURL(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
        let fetch = HTTPFetch(
            timeout: timeout, maxBytes: 8 << 20, redact: { [key] in key.redact($0) }, what: "the photo search")
        let answer = try await fetch.get(url, shownURL: shownEndpoint)
        try checkStatus(answer)
        return try FlickrResponse.parse(
            answer.body, wantedSizes: sizes, redact: key.redact, licences: licences, photoPages: photoPages)
    }

    /// The licences photos can have (`flickr.photos.licenses.getInfo`): id → name and URL.
    public func licences() async throws(PhotoSourceError) -> [String: FlickrLicence] {
        let url = try methodURL([
            URLQueryItem(name: "method", value: "flickr.photos.licenses.getInfo"),
            URLQueryItem(name: "api_key", value: key.secret),
            URLQueryItem(name: "format", value: "json"), URLQueryItem(name: "nojsoncallback", value: "1"),
        ])
        let fetch = HTTPFetch(
            timeout: timeout, maxBytes: 1 << 20, redact: { [key] in key.redact($0) }, what: "the licence list")
        let answer = try await fetch.get(url, shownURL: shownEndpoint)
        try checkStatus(answer)
        return try FlickrResponse.licences(answer.body, redact: key.redact)
    }

    /// Flickr's own photo pages for Flickr; a compatible service's own origin otherwise (the
    /// demo service serves a page for each of its photos).
    var photoPages: String {
        guard endpoint != Self.defaultEndpoint, let components = URLComponents(string: endpoint),
            let scheme = components.scheme, let host = components.host
        else { return Self.defaultPhotoPages }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)" + (components.port.map { ":\($0)" } ?? "")
    }

    func checkStatus(_ answer: HTTPFetch.Answer) throws(PhotoSourceError) {
        switch answer.status {
        case 200:
            break
        case 500...599:
            throw PhotoSourceError(
                .serviceUnavailable, "the photo service at \(shownEndpoint) answered HTTP \(answer.status); try again later")
        default:
            throw PhotoSourceError(.httpStatus, "the photo service at \(shownEndpoint) answered HTTP \(answer.status)")
        }
    }

    /// The request's URL (it holds the key: never print it).
    func searchURL(latitude: Double, longitude: Double, page: Int, perPage: Int) throws(PhotoSourceError) -> String {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw PhotoSourceError(.invalidArgument, "latitude \(latitude) is outside -90…90")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw PhotoSourceError(.invalidArgument, "longitude \(longitude) is outside -180…180")
        }
        guard page >= 1 else { throw PhotoSourceError(.invalidArgument, "result pages start at 1, not \(page)") }
        guard (1...Self.maxPerPage).contains(perPage) else {
            throw PhotoSourceError(.invalidArgument, "a geo search page holds 1 to \(Self.maxPerPage) photos, not \(perPage)")
        }
        guard radiusKilometres > 0, radiusKilometres < Self.maxRadiusKilometres else {
            throw PhotoSourceError(.invalidArgument, "the search radius must be over 0 and under 32 km, not \(radiusKilometres)")
        }
        return try methodURL([
            URLQueryItem(name: "method", value: "flickr.photos.search"),
            URLQueryItem(name: "api_key", value: key.secret),
            URLQueryItem(name: "lat", value: String(latitude)),
            URLQueryItem(name: "lon", value: String(longitude)),
            URLQueryItem(name: "radius", value: radiusKilometres.compactText),
            URLQueryItem(name: "radius_units", value: "km"),
            URLQueryItem(name: "min_upload_date", value: String(Self.minimumUploadDate)),
            URLQueryItem(name: "safe_search", value: "1"),
            URLQueryItem(name: "content_type", value: "1"),
            URLQueryItem(name: "media", value: "photos"),
            URLQueryItem(name: "extras", value: (sizes + Self.creditExtras).joined(separator: ",")),
            URLQueryItem(name: "per_page", value: String(perPage)),
            URLQueryItem(name: "page", value: String(page)),
            URLQueryItem(name: "format", value: "json"),
            URLQueryItem(name: "nojsoncallback", value: "1"),
        ])
    }

    /// The endpoint with this query.
    func methodURL(_ query: [URLQueryItem]) throws(PhotoSourceError) -> String {
        guard var components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", components.host?.isEmpty == false
        else {
            throw PhotoSourceError(.configuration, "the photo service endpoint \(shownEndpoint) is not an http(s) URL")
        }
        components.queryItems = query
        guard let url = components.string else {
            throw PhotoSourceError(.configuration, "the photo service endpoint \(shownEndpoint) cannot take a query")
        }
        return url
    }

    /// The endpoint as messages show it: without any query (which could hold a key).
    var shownEndpoint: String {
        key.redact(String(endpoint.prefix { $0 != "?" }))
    }
}
