import PhotoSources

/// The offline service as a photo source, wherever it listens now.
///
/// Its listings name each image by an absolute address with the port the service had when it
/// listed it (they are Flickr's answers, and Flickr's are absolute), and it takes a new port
/// on every start. So an image listed by an earlier run (an album whose downloads a restart or
/// a kill cut short, or a "Try again" of photos that failed) is asked of the service as it is
/// now, by its path: the listing is resolved against the running service, never against the
/// port it had. Addresses that are not the offline service's images are asked as they are.
public struct DemoPhotoSource: PhotoSource {
    let flickr: FlickrPhotoSource
    /// `http://HOST:PORT` of the service as it is now.
    let origin: String

    public var name: String { flickr.name }
    public var pageOrder: PageOrder { flickr.pageOrder }

    public init(server: DemoPhotoServer, client: FlickrClient, downloader: ImageDownloader = ImageDownloader(), name: String? = nil) {
        flickr = FlickrPhotoSource(client: client, downloader: downloader, name: name)
        origin = server.origin
    }

    public func search(latitude: Double, longitude: Double, page: Int, perPage: Int) async throws(PhotoSourceError)
        -> PhotoSearchPage
    {
        try await flickr.search(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
    }

    public func image(at url: String) async throws(PhotoSourceError) -> [UInt8] {
        try await flickr.image(at: Self.locate(url, at: origin))
    }

    /// `url` on the service at `origin` when it names one of the offline service's images on
    /// loopback (`http://127.0.0.1:ANY/images/NAME`, or `localhost`, or `[::1]`); else `url`.
    public static func locate(_ url: String, at origin: String) -> String {
        let scheme = "http://"
        guard url.hasPrefix(scheme) else { return url }
        let rest = url.dropFirst(scheme.count)
        guard let slash = rest.firstIndex(of: "/") else { return url }
        let authority = rest[..<slash], path = rest[slash...]
        guard let colon = authority.lastIndex(of: ":"),
            ["127.0.0.1", "localhost", "[::1]"].contains(authority[..<colon]),
            !authority[authority.index(after: colon)...].isEmpty,
            authority[authority.index(after: colon)...].allSatisfy(\.isASCIIDigit),
            path.hasPrefix("/images/"), !path.dropFirst("/images/".count).contains(where: { "/?#\\".contains($0) })
        else { return url }
        return origin + path
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
