/// Downloads images over HTTP(S), bounded in time and size. What it returns is only bytes:
/// the blob store checks that they are an image before anything refers to them.
///
/// ```swift
/// let bytes = try await ImageDownloader().image(at: photo.url)
/// ```
public struct ImageDownloader: Sendable {
    /// The largest image accepted (the blob store's default limit).
    public var maxBytes: Int
    public var timeout: Duration
    /// Sent with each request (Wikimedia's image servers refuse requests without one that
    /// names the program and a contact).
    public var userAgent: String

    public init(maxBytes: Int = 16 << 20, timeout: Duration = .seconds(30), userAgent: String = "VirtualTourist/1") {
        self.maxBytes = maxBytes
        self.timeout = timeout
        self.userAgent = userAgent
    }

    /// - Throws: ``PhotoSourceError``: `.httpStatus` or `.serviceUnavailable` for an answer
    ///   other than 200, `.badResponse` for an empty or cut-short image, `.tooLarge`, `.timeout`, `.tls`,
    ///   `.network`.
    public func image(at url: String) async throws(PhotoSourceError) -> [UInt8] {
        guard FlickrResponse.isWebURL(url) else {
            throw PhotoSourceError(.invalidArgument, "\(url.prefix(200)) is not an http(s) URL")
        }
        let fetch = HTTPFetch(timeout: timeout, maxBytes: maxBytes, what: "the image", userAgent: userAgent)
        let answer = try await fetch.get(url, shownURL: url)
        switch answer.status {
        case 200: break
        case 500...599: throw PhotoSourceError(.serviceUnavailable, "the image at \(url) answered HTTP \(answer.status)")
        default: throw PhotoSourceError(.httpStatus, "the image at \(url) answered HTTP \(answer.status)")
        }
        guard !answer.body.isEmpty else { throw PhotoSourceError(.badResponse, "the image at \(url) is empty") }
        if let problem = ImageIntegrity.problem(with: answer.body) {
            throw PhotoSourceError(.badResponse, "the image at \(url) is cut short (\(answer.body.count) bytes): \(problem)")
        }
        return answer.body
    }
}

/// Flickr (or a Flickr-compatible service) as a ``PhotoSource``.
public struct FlickrPhotoSource: PhotoSource {
    public let client: FlickrClient
    public let downloader: ImageDownloader
    public let name: String
    let licenceCache = FlickrLicenceCache()

    public init(client: FlickrClient, downloader: ImageDownloader = ImageDownloader(), name: String? = nil) {
        self.client = client
        self.downloader = downloader
        self.name = name ?? (client.endpoint == FlickrClient.defaultEndpoint ? "Flickr" : "the photo service at \(client.shownEndpoint)")
    }

    public func search(latitude: Double, longitude: Double, page: Int, perPage: Int) async throws(PhotoSourceError)
        -> PhotoSearchPage
    {
        let licences = await licenceCache.licences { () async throws(PhotoSourceError) in try await client.licences() }
        return try await client.search(latitude: latitude, longitude: longitude, page: page, perPage: perPage, licences: licences)
    }

    public func image(at url: String) async throws(PhotoSourceError) -> [UInt8] {
        try await downloader.image(at: url)
    }
}
