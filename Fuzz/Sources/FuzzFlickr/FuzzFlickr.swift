// Fuzzes the reading of flickr.photos.search answers (FlickrResponse.parse): any bytes a
// service may send back. An answer either parses into a sane page or becomes a
// PhotoSourceError, and no error message may carry the API key, even when the service echoes
// it (docs/ALBUMS.md). A parsed page then goes through New Collection's page choice, as the
// album pipeline uses it.
//
// Input: the HTTP body.

import FuzzSupport
import PhotoAnswers
import SeededRandom

/// A key in Flickr's format. The corpus echoes it the way a service may echo a request.
let secret = "0123456789abcdef0123456789abcdef"
/// Another key of the same length, sharing no character with it.
let standIn = "ZYXWVUTSRQPONMLKZYXWVUTSRQPONMLK"
let keys = [try! FlickrAPIKey(secret), try! FlickrAPIKey(standIn)]
/// FlickrClient's default sizes, plus one it never asks for.
let sizes = ["url_m", "url_q", "url_s"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let outcome = parse(body)
    switch outcome {
    case .page(let page):
        check(page)
    case .error(_, let message):
        require(!contains(message, secret), "the API key reached a message: \(message)")
    }
    // The same answer with every copy of the key swapped for the stand-in: when redaction
    // works, no error message can tell the two apart. (A message cut before it is redacted,
    // or a key the redaction does not recognise, shows a piece of one key or the other.)
    let swapped = replacing(secret, with: standIn, in: body)
    if swapped != body, case .error = outcome {
        let other = parse(swapped)
        require(outcome == other, "the error depends on the key: \(outcome) versus \(other)")
    }
    return 0
}

enum Outcome: Equatable {
    case page(PhotoSearchPage)
    case error(PhotoSourceError.Code, String)
}

/// The client's parse, with every configured key redacted from what reaches a message.
func parse(_ body: [UInt8]) -> Outcome {
    do {
        let redact = { (text: String) in keys.reduce(text) { $1.redact($0) } }
        return .page(try FlickrResponse.parse(body, wantedSizes: sizes, redact: redact))
    } catch {
        return .error(error.code, error.message)
    }
}

/// A parsed page is within range, with web URLs only.
func check(_ page: PhotoSearchPage) {
    require(page.page >= 0 && page.pages >= 0 && page.perPage >= 0 && page.total >= 0, "a negative count: \(page)")
    for photo in page.photos {
        require(!photo.id.isEmpty && photo.width >= 0 && photo.height >= 0, "a photo out of range: \(photo)")
        let scheme = photo.url.prefix { $0 != ":" }.lowercased()
        require(scheme == "http" || scheme == "https", "a photo URL that is not on the web: \(photo.url)")
    }
    choosePages(page)
}

/// True when `text` holds `piece`, compared as UTF-8 bytes (so that no Unicode equivalence
/// rule can hide a copy).
func contains(_ text: String, _ piece: String) -> Bool {
    let bytes = Array(text.utf8), pattern = Array(piece.utf8)
    guard bytes.count >= pattern.count else { return false }
    return (0...(bytes.count - pattern.count)).contains { bytes[$0..<$0 + pattern.count].elementsEqual(pattern) }
}

/// `bytes` with each occurrence of `old` (left to right, not overlapping) replaced by `new`.
func replacing(_ old: String, with new: String, in bytes: [UInt8]) -> [UInt8] {
    let pattern = Array(old.utf8), replacement = Array(new.utf8)
    var result: [UInt8] = []
    result.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
        if index + pattern.count <= bytes.count, bytes[index..<index + pattern.count].elementsEqual(pattern) {
            result += replacement
            index += pattern.count
        } else {
            result.append(bytes[index])
            index += 1
        }
    }
    return result
}

/// New Collection's page from this answer: always in 1…last, and another page than the
/// current one whenever there is another.
func choosePages(_ page: PhotoSearchPage) {
    // Seeded from the input, so that a crash reproduces from its input alone.
    var random = SplitMix(seed: UInt64(truncatingIfNeeded: page.total))
    let last = PageChoice.lastServedPage(pages: page.pages, perPage: page.perPage)
    require(last >= 1, "the last served page is \(last)")
    for current in [page.page, 1, last] {
        let chosen = PageChoice.newCollectionPage(
            pages: page.pages, perPage: page.perPage, current: current, using: &random)
        require((1...last).contains(chosen), "page \(chosen) is outside 1…\(last)")
        require(last == 1 || chosen != current, "New Collection chose the current page \(current) again")
    }
}
