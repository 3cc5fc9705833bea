// Fuzzes the reading of Wikimedia Commons' Action API answers (CommonsResponse): any bytes a
// service may send back, read as each kind of answer the client asks for — a geosearch, a
// batch of the wider search (list=search, which New Collection pages through past the
// geosearch's 500 hits), and image information. Each either reads into sane values or becomes
// a PhotoSourceError with a message.
//
// Input: the HTTP body.

import FuzzSupport
import PhotoAnswers

/// Page ids a client may ask image information for besides those the body names.
let askedFor = [1, 7, 42, 123_456]
let bitmapExtensions: Set<String> = ["jpg", "jpeg", "jpe", "png", "webp", "gif"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    var named: [Int] = []
    do {
        let listing = try CommonsResponse.geosearch(body)
        check(listing.hits)
        require(listing.hits.count <= listing.named, "more hits than entries: \(listing)")
        named += listing.hits.map(\.pageID)
    } catch {
        checkMessage(error)
    }
    do {
        let batch = try CommonsResponse.searchBatch(body)
        check(batch.hits)
        require((batch.totalHits ?? 0) >= 0, "a negative count: \(batch)")
        // A continuation must only ever move the client forwards.
        require((batch.nextOffset ?? 0) >= 0, "a negative continuation: \(batch)")
        named += batch.hits.map(\.pageID)
    } catch {
        checkMessage(error)
    }
    let order = named + askedFor
    do {
        let photos = try CommonsResponse.photos(body, order: order)
        check(photos, order: order)
    } catch {
        checkMessage(error)
    }
    return 0
}

/// Listed files are bitmaps with real page ids, each once.
func check(_ hits: [CommonsResponse.Hit]) {
    var seen = Set<Int>()
    for hit in hits {
        require(hit.pageID > 0, "a page id out of range: \(hit)")
        require(seen.insert(hit.pageID).inserted, "page \(hit.pageID) listed twice")
        let suffix = hit.title.split(separator: ".").last.map { $0.lowercased() } ?? ""
        require(hit.title.contains(".") && bitmapExtensions.contains(suffix), "not a bitmap: \(hit.title)")
    }
}

/// Photos are among those asked for, in the order asked, once each, with web links only.
func check(_ photos: [FoundPhoto], order: [Int]) {
    let positions = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    var last = -1
    for photo in photos {
        guard let id = Int(photo.id), let position = positions[id] else {
            require(false, "photo \(photo.id) was not asked for")
            return
        }
        require(position > last, "photo \(photo.id) out of the order asked for")
        last = position
        require(photo.width >= 0 && photo.height >= 0, "a size out of range: \(photo)")
        require(isWeb(photo.url), "a thumbnail that is not on the web: \(photo.url)")
        for link in [photo.credit.pageURL, photo.credit.licenceURL] where !link.isEmpty {
            require(isWeb(link), "a credit link that is not on the web: \(link)")
        }
    }
}

func isWeb(_ url: String) -> Bool {
    let scheme = url.prefix { $0 != ":" }.lowercased()
    return scheme == "http" || scheme == "https"
}

/// An error says what went wrong, briefly.
func checkMessage(_ error: PhotoSourceError) {
    require(!error.message.isEmpty, "an error without a message: \(error.code)")
    require(error.message.count <= 2_000, "an error message of \(error.message.count) characters")
}
