import Foundation

/// Paging past the geosearch's 500 hits. `list=geosearch` cannot go further, so once a place's
/// nearest 500 files are used up the listing goes on with CirrusSearch's full-text search
/// restricted to the same circle (`nearcoord:`) and to bitmaps (`filetype:bitmap`), paged with
/// `sroffset`. That search ranks differently and names most of the geosearch's files again, so
/// its results are de-duplicated against them; it serves results only to a depth of 10,000.
extension CommonsClient {
    /// CirrusSearch serves results only down to this depth (offset + limit); it answers an
    /// offset at or past it with the error `cirrussearch-offset-too-large`.
    public static let maxSearchDepth = 10_000
    /// `list=search` gives at most 500 results a request (`srlimit`).
    public static let maxSearchBatch = 500
    /// The last position the listing can reach: the geosearch's hits, then the search's.
    static let deepestListing = maxHits + maxSearchDepth

    /// What the wider search adds to a full geosearch.
    struct WiderListing {
        /// The files the geosearch did not name, in the search's order, at least as many as
        /// were wanted when there are that many within reach.
        var hits: [CommonsResponse.Hit]
        /// The whole listing's size (geosearch and wider search).
        var total: Int
    }

    /// The files of the wider search that `near` (the geosearch's hits) does not hold, until
    /// `wanted` of them are found or the search ends (the page asked for holds those from
    /// position `first` on): batches of 500 from the first result,
    /// each starting where the service's `continue.sroffset` says, never past 10,000 deep.
    /// Every batch is read from the start, so a page lands on the same files whatever page was
    /// asked for before (the order is by upload time, oldest first, so new uploads join at the
    /// end instead of shifting every page).
    func widerListing(
        latitude: Double, longitude: Double, near: [CommonsResponse.Hit], first: Int, wanted: Int
    ) async throws(PhotoSourceError) -> WiderListing {
        // A page that starts past the reachable depth is empty whatever the search holds; only
        // the count is asked for, so that the listing's total stays the same on every page.
        guard first < Self.maxSearchDepth else {
            return WiderListing(hits: [], total: try await widerCount(latitude: latitude, longitude: longitude, near: near.count))
        }
        var seen = Set(near.map(\.pageID))
        var found: [CommonsResponse.Hit] = []
        var totalHits: Int?
        var offset = 0
        var exhausted = false
        while found.count < wanted {
            let query = widerQuery(latitude: latitude, longitude: longitude, offset: offset, limit: min(Self.maxSearchBatch, Self.maxSearchDepth - offset))
            let batch = try CommonsResponse.searchBatch(try await api(query, doing: "the wider Commons search"))
            totalHits = batch.totalHits ?? totalHits
            // Offset paging over a live index can name a file twice; it is listed once.
            for hit in batch.hits where seen.insert(hit.pageID).inserted { found.append(hit) }
            // Only forwards and within reach: a continuation that does not move on would
            // otherwise ask for the same batch for ever, and one past the depth is an error.
            guard let next = batch.nextOffset, next > offset, next < Self.maxSearchDepth else {
                exhausted = true
                break
            }
            offset = next
        }
        let listed = near.count + found.count
        // Exact when the search ran out (or reached its depth); otherwise the search's count,
        // which holds the geosearch's files too, and at least one more than found so far.
        let total = exhausted ? listed : max(listed + 1, Self.estimate(near: near.count, totalHits: totalHits))
        return WiderListing(hits: found, total: total)
    }

    /// The listing's size when only the geosearch's part is read: one search request of a
    /// single result, for `searchinfo.totalhits`.
    func widerCount(latitude: Double, longitude: Double, near: Int) async throws(PhotoSourceError) -> Int {
        let query = widerQuery(latitude: latitude, longitude: longitude, offset: 0, limit: 1)
        let batch = try CommonsResponse.searchBatch(try await api(query, doing: "the wider Commons search"))
        if batch.totalHits == nil, batch.hits.isEmpty, batch.nextOffset == nil { return near }
        return Self.estimate(near: near, totalHits: batch.totalHits)
    }

    /// The whole listing's size from the search's count: the search covers the geosearch's
    /// circle, so its matches include the geosearch's files, and only the first 10,000 can be
    /// reached. A service that gives no count is taken to have as many as can be reached; the
    /// pages past its real end then come back empty, with the exact total.
    static func estimate(near: Int, totalHits: Int?) -> Int {
        max(near, min(totalHits ?? maxSearchDepth, maxSearchDepth))
    }

    /// `list=search` for bitmap files (namespace 6) within the client's radius, only their
    /// ids and titles (`srprop=` empty), oldest upload first.
    func widerQuery(latitude: Double, longitude: Double, offset: Int, limit: Int) -> [URLQueryItem] {
        [
            URLQueryItem(name: "action", value: "query"), URLQueryItem(name: "list", value: "search"),
            URLQueryItem(name: "srsearch", value: "nearcoord:\(nearcoordRadius),\(latitude),\(longitude) filetype:bitmap"),
            URLQueryItem(name: "srnamespace", value: "6"), URLQueryItem(name: "srlimit", value: String(limit)),
            URLQueryItem(name: "sroffset", value: String(offset)), URLQueryItem(name: "srprop", value: ""),
            URLQueryItem(name: "srinfo", value: "totalhits"), URLQueryItem(name: "srsort", value: "create_timestamp_asc"),
        ]
    }

    /// The radius as `nearcoord:` takes it: a whole number with `m` or `km` (it knows no other
    /// form, and reads a bare number as a latitude).
    var nearcoordRadius: String {
        radiusMetres % 1000 == 0 ? "\(radiusMetres / 1000)km" : "\(radiusMetres)m"
    }
}
