/// One page of a photo search: what the service found near a place.
public struct PhotoSearchPage: Hashable, Sendable {
    /// The page this is (1-based), and how many the search has.
    public var page: Int
    public var pages: Int
    public var perPage: Int
    /// How many photos the search found in all (the service serves at most the first 4,000).
    public var total: Int
    /// The photos that have an image URL of a wanted size, in the service's order.
    public var photos: [FoundPhoto]

    public init(page: Int, pages: Int, perPage: Int, total: Int, photos: [FoundPhoto]) {
        self.page = page
        self.pages = pages
        self.perPage = perPage
        self.total = total
        self.photos = photos
    }
}

/// One photo of a search page.
public struct FoundPhoto: Hashable, Sendable {
    /// The service's id for the photo.
    public var id: String
    public var title: String
    /// Where its image is downloaded from (http or https).
    public var url: String
    /// The image's size in pixels when the service said (0 when it did not).
    public var width: Int
    public var height: Int
    /// Who made it, under which licence, and where its own page is.
    public var credit: PhotoCredit

    public init(id: String, title: String, url: String, width: Int = 0, height: Int = 0, credit: PhotoCredit = PhotoCredit()) {
        self.id = id
        self.title = title
        self.url = url
        self.width = width
        self.height = height
        self.credit = credit
    }
}

/// What a photo's licence asks to be shown with it: its creator, the licence (a short name and
/// its URL) and the photo's own page. Empty strings where the service said nothing.
public struct PhotoCredit: Hashable, Sendable {
    /// The creator, as plain text (never HTML).
    public var creator: String
    /// The licence's short name ("CC BY-SA 4.0") and where its text is.
    public var licenceName: String
    public var licenceURL: String
    /// The photo's own page on its service.
    public var pageURL: String
    /// When it was taken, as the service wrote it ("2019-05-01 12:00:00").
    public var dateTaken: String

    public init(creator: String = "", licenceName: String = "", licenceURL: String = "", pageURL: String = "", dateTaken: String = "") {
        self.creator = creator
        self.licenceName = licenceName
        self.licenceURL = licenceURL
        self.pageURL = pageURL
        self.dateTaken = dateTaken
    }
}

/// Where photos are searched for and downloaded from: Flickr (or a Flickr-compatible service
/// such as the offline demo server) or Wikimedia Commons. The album pipeline knows only this.
public protocol PhotoSource: Sendable {
    /// A human-readable name for messages ("Flickr", "the offline demo photo service at …").
    var name: String { get }
    /// How New Collection chooses its page: at random (Flickr's pages are a sample of
    /// thousands) or the next one (Commons' listing is one short list, sliced into pages, so
    /// the next slice holds photos not shown before). Random unless the source says otherwise.
    var pageOrder: PageOrder { get }
    /// One page of photos near a place.
    func search(latitude: Double, longitude: Double, page: Int, perPage: Int) async throws(PhotoSourceError)
        -> PhotoSearchPage
    /// The bytes of one image.
    func image(at url: String) async throws(PhotoSourceError) -> [UInt8]
}

extension PhotoSource {
    public var pageOrder: PageOrder { .random }
}

/// How New Collection moves through a search's pages.
public enum PageOrder: Sendable, Hashable {
    /// Any page but the current one.
    case random
    /// The page after the current one, back to the first after the last.
    case sequential
}

/// Choosing the result page for a New Collection.
///
/// ```swift
/// var random = SystemRandomNumberGenerator()
/// PageChoice.newCollectionPage(pages: 90, perPage: 21, current: 1, using: &random)  // 2…90, never 1
/// PageChoice.newCollectionPage(pages: 900, perPage: 21, current: 3, using: &random) // 1…190, never 3
/// ```
public enum PageChoice {
    /// Flickr serves at most the first 4,000 results of a search.
    public static let servedResults = 4000

    /// The last page the service will serve: min(pages, ⌊4000 ÷ perPage⌋), and at least 1.
    public static func lastServedPage(pages: Int, perPage: Int) -> Int {
        guard perPage > 0 else { return 1 }
        return max(1, min(pages, servedResults / perPage))
    }

    /// A random page in 1…``lastServedPage(pages:perPage:)``, different from `current` when
    /// there is more than one page to choose from. Never 0, never past the last. O(1).
    public static func newCollectionPage<Random: RandomNumberGenerator>(
        pages: Int, perPage: Int, current: Int, using random: inout Random
    ) -> Int {
        let last = lastServedPage(pages: pages, perPage: perPage)
        guard last > 1 else { return 1 }
        guard (1...last).contains(current) else { return Int.random(in: 1...last, using: &random) }
        let other = Int.random(in: 1...(last - 1), using: &random)
        return other >= current ? other + 1 : other
    }

    /// The page New Collection asks for in `order`: ``newCollectionPage(pages:perPage:current:using:)``
    /// for `.random`; for `.sequential` the page after `current`, or the first after the last
    /// (never 0, never past the last). O(1).
    public static func newCollectionPage<Random: RandomNumberGenerator>(
        order: PageOrder, pages: Int, perPage: Int, current: Int, using random: inout Random
    ) -> Int {
        switch order {
        case .random:
            return newCollectionPage(pages: pages, perPage: perPage, current: current, using: &random)
        case .sequential:
            let last = max(1, pages)
            return (1..<last).contains(current) ? current + 1 : 1
        }
    }
}
