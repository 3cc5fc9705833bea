import Foundation

/// Reads the MediaWiki Action API's JSON leniently, as Commons writes it: page ids as numbers
/// or strings, `pages` keyed by page id (format version 1) or a list (version 2), fields
/// missing from some files, HTML in `extmetadata`, and errors that arrive with HTTP 200 as
/// `{"error": {"code": …, "info": …}}`.
public enum CommonsResponse {
    /// The file types kept: bitmaps a browser shows. SVG, PDF, TIFF, audio and video are not.
    public static let bitmapTypes: Set<String> = ["image/jpeg", "image/png", "image/webp", "image/gif"]
    static let bitmapExtensions: Set<String> = ["jpg", "jpeg", "jpe", "png", "webp", "gif"]

    /// One file a listing named: a geosearch hit or a search result.
    public struct Hit: Hashable, Sendable {
        public var pageID: Int
        public var title: String
    }

    /// A geosearch's answer: its bitmap files, and how many files it named before filtering
    /// (the API stops at `gslimit`, so a full answer means there may be more further out).
    public struct GeoListing: Hashable, Sendable {
        public var hits: [Hit]
        public var named: Int
    }

    /// One batch of a `list=search` answer.
    public struct SearchBatch: Hashable, Sendable {
        /// Its bitmap files in the service's order, each page once.
        public var hits: [Hit]
        /// `searchinfo.totalhits`: how many files match in all (more than can be paged to).
        public var totalHits: Int?
        /// `continue.sroffset`: where the next batch starts; nil when this was the last.
        public var nextOffset: Int?
    }

    /// The geosearch's hits that are bitmap files, nearest first, each page once.
    static func hits(_ body: [UInt8]) throws(PhotoSourceError) -> [Hit] {
        try geosearch(body).hits
    }

    /// A geosearch's answer (`query.geosearch`).
    public static func geosearch(_ body: [UInt8]) throws(PhotoSourceError) -> GeoListing {
        let root = try object(body)
        guard let query = root["query"] as? [String: Any] else {
            if root["batchcomplete"] != nil { return GeoListing(hits: [], named: 0) }
            throw PhotoSourceError(.badResponse, "Commons' answer to the search has no \"query\"")
        }
        let list = try entries(query["geosearch"], named: "geosearch")
        return GeoListing(hits: bitmapHits(list), named: list.count)
    }

    /// One batch of a `list=search` answer (`query.search`, `query.searchinfo.totalhits` and
    /// `continue.sroffset`), numbers as numbers or strings.
    public static func searchBatch(_ body: [UInt8]) throws(PhotoSourceError) -> SearchBatch {
        let root = try object(body)
        let next = (root["continue"] as? [String: Any]).flatMap { FlickrResponse.integer($0["sroffset"]) }
        guard let query = root["query"] as? [String: Any] else {
            if root["batchcomplete"] != nil { return SearchBatch(hits: [], totalHits: 0, nextOffset: nil) }
            throw PhotoSourceError(.badResponse, "Commons' answer to the wider search has no \"query\"")
        }
        let total = (query["searchinfo"] as? [String: Any]).flatMap { FlickrResponse.integer($0["totalhits"]) }
        // A negative offset or count is nonsense whatever sent it; treated as absent, it can
        // neither send the client backwards nor shrink the listing below what it holds.
        return SearchBatch(
            hits: bitmapHits(try entries(query["search"], named: "search")), totalHits: total.map { max(0, $0) },
            nextOffset: next.flatMap { $0 >= 0 ? $0 : nil })
    }

    static func entries(_ value: Any?, named name: String) throws(PhotoSourceError) -> [Any] {
        guard let list = (value ?? []) as? [Any] else {
            throw PhotoSourceError(.badResponse, "Commons' \"\(name)\" is not a list")
        }
        return list
    }

    /// The entries that name a bitmap file (namespace 6), each page once, in their order.
    static func bitmapHits(_ list: [Any]) -> [Hit] {
        var seen = Set<Int>()
        var hits: [Hit] = []
        for case let fields as [String: Any] in list {
            guard let id = FlickrResponse.integer(fields["pageid"]), id > 0, let title = fields["title"] as? String else { continue }
            if let namespace = FlickrResponse.integer(fields["ns"]), namespace != 6 { continue }
            guard isBitmapName(title), seen.insert(id).inserted else { continue }
            hits.append(Hit(pageID: id, title: title))
        }
        return hits
    }

    /// The photos of an image-information answer, in `order` (the pages' order in the
    /// listing): bitmap files with a thumbnail URL from the API; the others are left out.
    public static func photos(_ body: [UInt8], order: [Int]) throws(PhotoSourceError) -> [FoundPhoto] {
        let root = try object(body)
        guard let query = root["query"] as? [String: Any] else {
            throw PhotoSourceError(.badResponse, "Commons' image information has no \"query\"")
        }
        let list: [Any]
        switch query["pages"] {
        case let keyed as [String: Any]: list = Array(keyed.values)
        case let listed as [Any]: list = listed
        case nil: list = []
        default: throw PhotoSourceError(.badResponse, "Commons' \"pages\" is neither an object nor a list")
        }
        var byID: [Int: FoundPhoto] = [:]
        for case let page as [String: Any] in list {
            guard let id = FlickrResponse.integer(page["pageid"]), let photo = photo(page, id: id) else { continue }
            byID[id] = photo
        }
        return order.compactMap { byID[$0] }
    }

    static func photo(_ page: [String: Any], id: Int) -> FoundPhoto? {
        guard let infos = page["imageinfo"] as? [Any], let info = infos.first as? [String: Any] else { return nil }
        guard let mime = info["mime"] as? String, bitmapTypes.contains(mime.lowercased()) else { return nil }
        // Only the thumbnail the API made: a URL built by hand for an unserved width is refused.
        guard let thumbnail = info["thumburl"] as? String, FlickrResponse.isWebURL(thumbnail) else { return nil }
        let metadata = info["extmetadata"] as? [String: Any] ?? [:]
        func field(_ name: String) -> String {
            guard let entry = metadata[name] as? [String: Any] else { return "" }
            return FlickrResponse.text(entry["value"]).map { HTMLText.plain($0) } ?? ""
        }
        let fileTitle = (page["title"] as? String) ?? ""
        let user = HTMLText.plain((info["user"] as? String) ?? "")
        let artist = field("Artist")
        let licenceURL = field("LicenseUrl")
        let pageURL = (info["descriptionurl"] as? String).flatMap { FlickrResponse.isWebURL($0) ? $0 : nil } ?? ""
        let credit = PhotoCredit(
            creator: artist.isEmpty ? user : artist, licenceName: field("LicenseShortName"),
            licenceURL: FlickrResponse.isWebURL(absolute(licenceURL)) ? absolute(licenceURL) : "", pageURL: pageURL,
            dateTaken: field("DateTimeOriginal"))
        let name = field("ObjectName")
        return FoundPhoto(
            id: String(id), title: name.isEmpty ? displayName(fileTitle) : name, url: thumbnail,
            width: max(0, FlickrResponse.integer(info["thumbwidth"]) ?? 0),
            height: max(0, FlickrResponse.integer(info["thumbheight"]) ?? 0), credit: credit)
    }

    /// "File:Eiffel tower.jpg" → "Eiffel tower".
    static func displayName(_ title: String) -> String {
        var name = title.hasPrefix("File:") ? String(title.dropFirst(5)) : title
        if let dot = name.lastIndex(of: "."), isBitmapName(name) { name = String(name[..<dot]) }
        return name
    }

    static func isBitmapName(_ title: String) -> Bool {
        guard let dot = title.lastIndex(of: ".") else { return false }
        return bitmapExtensions.contains(title[title.index(after: dot)...].lowercased())
    }

    /// Licence URLs sometimes come protocol-relative (`//creativecommons.org/…`).
    static func absolute(_ url: String) -> String {
        url.hasPrefix("//") ? "https:" + url : url
    }

    package static func object(_ body: [UInt8]) throws(PhotoSourceError) -> [String: Any] {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(body))
        } catch {
            throw PhotoSourceError(
                .badResponse, "Wikimedia Commons' answer is not JSON (\(body.count) bytes: \(FlickrResponse.preview(body, redact: { $0 })))")
        }
        guard let root = parsed as? [String: Any] else {
            throw PhotoSourceError(.badResponse, "Wikimedia Commons' answer is JSON but not an object")
        }
        return root
    }
}
