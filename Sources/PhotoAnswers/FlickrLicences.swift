import Synchronization

/// One of Flickr's licences, as `flickr.photos.licenses.getInfo` names it (ids 0–16 today).
public struct FlickrLicence: Hashable, Sendable {
    public var name: String
    /// Empty for licences without a page ("All Rights Reserved").
    public var url: String

    public init(name: String, url: String) {
        self.name = name
        self.url = url
    }
}

/// The licence list, asked for once and kept: it changes perhaps once in years, and every
/// search needs it to name its photos' licences. A failed request is not kept, so the next
/// search asks again.
package final class FlickrLicenceCache: Sendable {
    private let known = Mutex<[String: FlickrLicence]?>(nil)

    package init() {}

    /// The list, fetched through `load` the first time; empty (licences then show by id) when
    /// the service cannot give it, so that credits never cost a whole album.
    package func licences(_ load: () async throws(PhotoSourceError) -> [String: FlickrLicence]) async -> [String: FlickrLicence] {
        if let cached = known.withLock({ $0 }) { return cached }
        guard let fetched = try? await load() else { return [:] }
        known.withLock { $0 = fetched }
        return fetched
    }

    package var isLoaded: Bool { known.withLock { $0 != nil } }
}
