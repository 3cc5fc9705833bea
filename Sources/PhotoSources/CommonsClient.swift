import Foundation

/// The client of Wikimedia Commons' MediaWiki Action API (`…/w/api.php`), which needs no key:
/// a geosearch of files near a place (and past its 500 hits a wider `nearcoord:` search,
/// CommonsWiderSearch.swift), then image information (thumbnail URL, type, credits) for one
/// page of them. Images are fetched through ``image(at:)``, under the same limit.
///
/// ```swift
/// let commons = try CommonsClient(contact: "ann@example.org")
/// let page = try await commons.search(latitude: 48.8584, longitude: 2.2945, page: 1, perPage: 21)
/// page.photos.first?.credit.licenceName     // "CC BY-SA 4.0"
/// ```
///
/// Etiquette, as the service enforces it: a User-Agent naming the program and a contact (others
/// get HTTP 403), at most ``maxConcurrentRequests`` requests at once, `maxlag` on every API
/// request, and `Retry-After` honoured on HTTP 429 and on a `maxlag` error.
public struct CommonsClient: Sendable {
    public static let defaultEndpoint = "https://commons.wikimedia.org/w/api.php"
    /// Points the client at another MediaWiki API (a mirror, the tests' double).
    public static let endpointVariable = "VT_COMMONS_ENDPOINT"
    /// The contact put in the User-Agent (an e-mail address or a URL).
    public static let contactVariable = "VT_CONTACT"
    /// Used when `VT_CONTACT` is not set: the project's own contact.
    public static let defaultContact = "https://github.com/virtual-tourist/virtual-tourist"
    /// The geosearch radius the API allows, in metres.
    public static let radiusRange = 10...10_000
    /// A geosearch returns at most this many hits, and cannot page further; a full answer is
    /// where the wider search (`list=search` with `nearcoord:`) takes over.
    public static let maxHits = 500
    /// Image information with thumbnails is given for at most 50 files a request.
    public static let maxThumbnailsPerRequest = 50
    /// Thumbnail widths Commons serves; others are refused (or rounded by the API).
    public static let standardWidths = [120, 250, 330, 500, 960, 1280, 1920]
    public static let maxConcurrentRequests = 3
    /// The replication lag, in seconds, past which the API should refuse a request (its
    /// documentation asks non-interactive clients to send maxlag=5).
    public static let maxlag = 5

    public let endpoint: String
    public let radiusMetres: Int
    public let thumbnailWidth: Int
    public let userAgent: String
    public let timeout: Duration
    /// How many times a request is tried again after a 429 or a maxlag error.
    public let retries: Int
    /// The longest `Retry-After` waited for; a longer one fails at once (the album can be
    /// retried later) instead of leaving it "downloading" for minutes.
    public let longestWait: Duration
    let limiter: RequestLimiter
    /// How a `Retry-After` is waited: `Task.sleep` unless the caller gives another (a test's
    /// recorder; the only clock the client reads, the HTTP timeouts being the network's own).
    let pause: @Sendable (Duration) async throws -> Void

    /// - Throws: ``PhotoSourceError`` `.invalidArgument` for a radius outside 10…10,000 m, a
    ///   width that is not a standard step, or a contact that cannot go in a header;
    ///   `.configuration` for an endpoint that is not an http(s) URL.
    public init(
        endpoint: String = defaultEndpoint, contact: String? = nil, radiusMetres: Int = 10_000, thumbnailWidth: Int = 330,
        timeout: Duration = .seconds(20), retries: Int = 2, longestWait: Duration = .seconds(30),
        limiter: RequestLimiter = RequestLimiter(limit: maxConcurrentRequests),
        pause: (@Sendable (Duration) async throws -> Void)? = nil
    ) throws(PhotoSourceError) {
        guard Self.radiusRange.contains(radiusMetres) else {
            throw PhotoSourceError(.invalidArgument, "the Commons search radius must be 10 to 10000 m, not \(radiusMetres)")
        }
        guard Self.standardWidths.contains(thumbnailWidth) else {
            let steps = Self.standardWidths.map(String.init).joined(separator: ", ")
            throw PhotoSourceError(.invalidArgument, "Commons serves thumbnails \(steps) pixels wide, not \(thumbnailWidth)")
        }
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", components.host?.isEmpty == false, components.query == nil
        else {
            throw PhotoSourceError(.configuration, "the Commons endpoint \(endpoint.prefix(200)) is not an http(s) URL of …/w/api.php")
        }
        let contact = (contact ?? Self.defaultContact).trimmingWhitespace
        guard !contact.isEmpty, contact.count <= 200, contact.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
            throw PhotoSourceError(
                .invalidArgument, "the contact for the User-Agent (\(Self.contactVariable)) must be printable ASCII, 1 to 200 characters")
        }
        self.endpoint = endpoint
        self.radiusMetres = radiusMetres
        self.thumbnailWidth = thumbnailWidth
        self.userAgent = "VirtualTourist/1.0 (\(contact)) photo-album app"
        self.timeout = timeout
        self.retries = max(0, retries)
        self.longestWait = longestWait
        self.limiter = limiter
        self.pause = pause ?? { try await Task.sleep(for: $0) }
    }

    /// One page of bitmap photos near a place. The listing is the geosearch's hits (nearest
    /// first, at most 500, only JPEG, PNG, WebP and GIF files), followed, when the geosearch was
    /// full, by the files a wider search (`list=search`, `nearcoord:`) finds that the geosearch
    /// did not name; it is cut into pages of `perPage`, and page `page` gets its image
    /// information (thumbnail, credits). `total` counts the whole listing: exact when it ends
    /// within reach, otherwise the search's own count (see ``widerListing(latitude:longitude:near:first:wanted:)``).
    ///
    /// - Throws: ``PhotoSourceError``: `.invalidArgument` before anything is sent for a bad
    ///   coordinate, page or page size; otherwise what the service or the network did.
    public func search(latitude: Double, longitude: Double, page: Int, perPage: Int) async throws(PhotoSourceError)
        -> PhotoSearchPage
    {
        let geosearch = try geosearchQuery(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
        let listing = try CommonsResponse.geosearch(try await api(geosearch, doing: "the Commons search"))
        let near = listing.hits
        // Where the page starts in the listing. Past the deepest reachable file every page is
        // empty, so bounding it keeps a huge page number from overflowing.
        let offset = (page - 1).multipliedReportingOverflow(by: perPage)
        let start = offset.overflow ? Self.deepestListing : min(offset.partialValue, Self.deepestListing)
        let chosen: [CommonsResponse.Hit]
        let total: Int
        if listing.named < Self.maxHits {
            // The geosearch named every file within the radius: a wider search would find the
            // same ones, so the listing is complete.
            chosen = Array(near.dropFirst(start).prefix(perPage))
            total = near.count
        } else if start <= near.count - perPage {
            chosen = Array(near[start..<start + perPage])
            total = try await widerCount(latitude: latitude, longitude: longitude, near: near.count)
        } else {
            let wider = try await widerListing(
                latitude: latitude, longitude: longitude, near: near, first: max(0, start - near.count),
                wanted: start + perPage - near.count)
            chosen = Array((near + wider.hits).dropFirst(start).prefix(perPage))
            total = wider.total
        }
        var photos: [FoundPhoto] = []
        var first = 0
        while first < chosen.count {
            let batch = Array(chosen[first..<min(chosen.count, first + Self.maxThumbnailsPerRequest)])
            let body = try await api(imageInfoQuery(batch.map(\.pageID)), doing: "Commons' image information")
            photos += try CommonsResponse.photos(body, order: batch.map(\.pageID))
            first += batch.count
        }
        let pages = total == 0 ? 0 : (total + perPage - 1) / perPage
        return PhotoSearchPage(page: page, pages: pages, perPage: perPage, total: total, photos: photos)
    }

    /// Whether the service answers now: one small API request (`meta=siteinfo`), tried once,
    /// within `limit`. Nil when it answered (even "busy": it is there); otherwise why not.
    /// `auto` uses it at start to choose between Commons and the offline demo service.
    public func probe(within limit: Duration = .seconds(3)) async -> PhotoSourceError? {
        var components = URLComponents(string: endpoint)!
        components.queryItems = [
            URLQueryItem(name: "action", value: "query"), URLQueryItem(name: "meta", value: "siteinfo"),
            URLQueryItem(name: "maxlag", value: String(Self.maxlag)), URLQueryItem(name: "format", value: "json"),
        ]
        let fetch = HTTPFetch(timeout: limit, maxBytes: 1 << 20, what: "Wikimedia Commons", userAgent: userAgent)
        do {
            let answer = try await fetch.get(components.string ?? endpoint, shownURL: endpoint)
            switch CommonsResponse.verdict(answer, endpoint: endpoint) {
            case .failed(let error): return error
            case .ok, .wait:
                _ = try CommonsResponse.object(answer.body)
                return nil
            }
        } catch {
            return error
        }
    }

    /// The bytes of one thumbnail, under the same request limit and User-Agent.
    public func image(at url: String, downloader: ImageDownloader) async throws(PhotoSourceError) -> [UInt8] {
        var downloader = downloader
        downloader.userAgent = userAgent
        let prepared = downloader
        return try await limiter.run { () async throws(PhotoSourceError) -> [UInt8] in try await prepared.image(at: url) }
    }

    func geosearchQuery(latitude: Double, longitude: Double, page: Int, perPage: Int) throws(PhotoSourceError) -> [URLQueryItem] {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw PhotoSourceError(.invalidArgument, "latitude \(latitude) is outside -90…90")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw PhotoSourceError(.invalidArgument, "longitude \(longitude) is outside -180…180")
        }
        guard page >= 1 else { throw PhotoSourceError(.invalidArgument, "result pages start at 1, not \(page)") }
        guard (1...250).contains(perPage) else {
            throw PhotoSourceError(.invalidArgument, "an album page holds 1 to 250 photos, not \(perPage)")
        }
        return [
            URLQueryItem(name: "action", value: "query"), URLQueryItem(name: "list", value: "geosearch"),
            URLQueryItem(name: "gscoord", value: "\(latitude)|\(longitude)"),
            URLQueryItem(name: "gsradius", value: String(radiusMetres)),
            URLQueryItem(name: "gslimit", value: String(Self.maxHits)), URLQueryItem(name: "gsnamespace", value: "6"),
        ]
    }

    func imageInfoQuery(_ pageIDs: [Int]) -> [URLQueryItem] {
        [
            URLQueryItem(name: "action", value: "query"), URLQueryItem(name: "prop", value: "imageinfo"),
            URLQueryItem(name: "pageids", value: pageIDs.map(String.init).joined(separator: "|")),
            URLQueryItem(name: "iiprop", value: "url|size|mime|extmetadata|user"),
            URLQueryItem(name: "iiurlwidth", value: String(thumbnailWidth)),
            URLQueryItem(
                name: "iiextmetadatafilter", value: "Artist|LicenseShortName|LicenseUrl|DateTimeOriginal|ObjectName"),
        ]
    }

    /// One API request: sent under the limit, tried again after a 429 or a maxlag error when
    /// the service's `Retry-After` is short enough, its HTTP-200 errors turned into
    /// ``PhotoSourceError``s.
    func api(_ query: [URLQueryItem], doing what: String) async throws(PhotoSourceError) -> [UInt8] {
        var components = URLComponents(string: endpoint)!
        components.queryItems = query + [
            URLQueryItem(name: "maxlag", value: String(Self.maxlag)), URLQueryItem(name: "format", value: "json"),
        ]
        guard let url = components.string else {
            throw PhotoSourceError(.configuration, "the Commons endpoint \(endpoint) cannot take a query")
        }
        let fetch = HTTPFetch(timeout: timeout, maxBytes: 8 << 20, what: what, userAgent: userAgent)
        var attempt = 0
        while true {
            let answer = try await limiter.run { () async throws(PhotoSourceError) -> HTTPFetch.Answer in
                try await fetch.get(url, shownURL: endpoint)
            }
            let verdict = CommonsResponse.verdict(answer, endpoint: endpoint)
            guard case .wait(let seconds, let because) = verdict else {
                if case .failed(let error) = verdict { throw error }
                return answer.body
            }
            let wait = Duration.seconds(seconds)
            guard attempt < retries, wait <= longestWait else {
                throw PhotoSourceError(
                    .serviceUnavailable,
                    "Wikimedia Commons is busy (\(because)) and asks to wait \(seconds) s; try again later")
            }
            attempt += 1
            do { try await pause(wait) } catch { throw PhotoSourceError(.cancelled, "\(what) was cancelled") }
        }
    }
}

/// Wikimedia Commons as a ``PhotoSource``. New Collection moves to the next slice of the
/// listing (the geosearch's hits, then the wider search's), so it shows photos not shown
/// before until the listing runs out.
public struct CommonsPhotoSource: PhotoSource {
    public let client: CommonsClient
    public let downloader: ImageDownloader
    public let name: String
    public var pageOrder: PageOrder { .sequential }

    public init(client: CommonsClient, downloader: ImageDownloader = ImageDownloader()) {
        self.client = client
        self.downloader = downloader
        self.name = client.endpoint == CommonsClient.defaultEndpoint ? "Wikimedia Commons" : "the Commons-compatible service at \(client.endpoint)"
    }

    public func search(latitude: Double, longitude: Double, page: Int, perPage: Int) async throws(PhotoSourceError)
        -> PhotoSearchPage
    {
        try await client.search(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
    }

    public func image(at url: String) async throws(PhotoSourceError) -> [UInt8] {
        try await client.image(at: url, downloader: downloader)
    }
}
