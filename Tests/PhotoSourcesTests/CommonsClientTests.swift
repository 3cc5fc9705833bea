import DemoPhotoServer
import Foundation
import PhotoServiceDoubles
@testable import PhotoAnswers
@testable import PhotoSources
import Synchronization
import Testing

/// Runs `body` with a Commons double, stopping it afterwards.
func withCommonsDouble<T>(catalogue: DemoCatalogue = DemoCatalogue(), _ body: (CommonsDouble) async throws -> T) async throws -> T {
    let double = try await CommonsDouble.start(catalogue: catalogue)
    do {
        let result = try await body(double)
        await double.stop()
        return result
    } catch {
        await double.stop()
        throw error
    }
}

/// A client of the double. Thumbnails are the smallest standard width unless a test is about
/// the width: generating large images for every test would only slow the suite.
func commonsClient(
    _ double: CommonsDouble, width: Int = 120, retries: Int = 2, longestWait: Duration = .seconds(30),
    pause: (@Sendable (Duration) async throws -> Void)? = nil
) throws -> CommonsClient {
    try CommonsClient(
        endpoint: double.endpoint, contact: "tests@example.org", thumbnailWidth: width, timeout: .seconds(60), retries: retries,
        longestWait: longestWait, pause: pause)
}

/// The files the double has for a place, as a client should see them: bitmaps only (of the
/// first `files`, the 500 a geosearch names, say).
func bitmapCount(_ place: (latitude: Double, longitude: Double), catalogue: DemoCatalogue = DemoCatalogue(), files: Int = .max) -> Int {
    let count = min(files, catalogue.photoCount(latitude: place.latitude, longitude: place.longitude))
    return (0..<count).filter { ![3, 6, 8].contains($0 % 10) }.count
}

@Suite struct CommonsClientTests {
    @Test func aSearchSendsTheDocumentedQueriesWithAContactInTheUserAgent() async throws {
        try await withCommonsDouble { double in
            let client = try commonsClient(double, width: 330)
            let place = DemoPlaces.many
            _ = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 21)
            let records = double.controls.records
            // The geosearch is full (the place has more than 500 files), so the listing's
            // size comes from the wider search's count.
            #expect(records.map(\.kind) == ["geosearch", "search", "imageinfo"])
            #expect(records[1].query["srlimit"] == "1" && records[1].query["srinfo"] == "totalhits")
            let geosearch = records[0].query
            #expect(geosearch["gsnamespace"] == "6" && geosearch["gsradius"] == "10000" && geosearch["gslimit"] == "500")
            #expect(geosearch["gscoord"] == "\(place.latitude)|\(place.longitude)")
            #expect(geosearch["maxlag"] == "5" && geosearch["format"] == "json")
            let info = records[2].query
            #expect(info["iiprop"] == "url|size|mime|extmetadata|user" && info["iiurlwidth"] == "330")
            #expect(info["pageids"]?.split(separator: "|").count == 21)
            #expect(records.allSatisfy { $0.userAgent?.contains("tests@example.org") == true })
            #expect(records.allSatisfy { $0.userAgent?.hasPrefix("VirtualTourist/") == true })
        }
    }

    @Test func theListingKeepsOnlyBitmapsAndTheThumbnailsTheAPIGave() async throws {
        try await withCommonsDouble { double in
            let client = try commonsClient(double, width: 330)
            let place = DemoPlaces.many
            let page = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 21)
            #expect(page.total == bitmapCount(place))
            #expect(page.pages == (page.total + 20) / 21)
            #expect(page.photos.count == 21)
            #expect(page.photos.allSatisfy { $0.url.hasPrefix(double.origin + "/thumb/") && $0.url.hasSuffix("/330px-photo.png") })
            #expect(page.photos.allSatisfy { $0.width == 330 && $0.height == 247 })
            // No drawing, document or video came through.
            #expect(!page.photos.contains { $0.title.hasSuffix(".svg") || $0.title.hasSuffix(".pdf") || $0.title.hasSuffix(".webm") })
            #expect(Set(page.photos.map(\.id)).count == 21)
            let bytes = try await client.image(at: page.photos[0].url, downloader: ImageDownloader())
            let png = try PNGReader(bytes)
            #expect(png.width == 330 && png.height == 247)
        }
    }

    @Test func creditsAreTextWithAFallbackToTheUploader() async throws {
        try await withCommonsDouble { double in
            let client = try commonsClient(double)
            let place = DemoPlaces.many
            let page = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 10)
            // The first file (index 0) has no Artist; the second (index 1) is in the public domain.
            let first = page.photos[0].credit
            #expect(first.creator == "Uploader 1")
            #expect(first.licenceName == "CC BY-SA 4.0" && first.licenceURL == "https://creativecommons.org/licenses/by-sa/4.0")
            #expect(first.pageURL == double.origin + "/wiki/File:Demo_photo_1.jpg")
            #expect(first.dateTaken == "")
            #expect(page.photos[0].title == "Demo photo 1")
            let second = page.photos[1].credit
            #expect(second.creator == "Photographer 2 & friends")
            #expect(second.licenceName == "Public domain" && second.licenceURL == "")
            #expect(second.dateTaken == "2019-05-02 12:00:00")
            #expect(page.photos.allSatisfy { !$0.credit.creator.contains("<") && !$0.credit.pageURL.isEmpty })
        }
    }

    @Test func pagesAreDisjointSlicesOfTheListing() async throws {
        try await withCommonsDouble { double in
            let client = try commonsClient(double)
            let place = DemoPlaces.many
            let one = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 21)
            let two = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 2, perPage: 21)
            #expect(two.photos.count == 21)
            #expect(Set(one.photos.map(\.id)).isDisjoint(with: two.photos.map(\.id)))
            let past = try await client.search(latitude: place.latitude, longitude: place.longitude, page: one.pages + 1, perPage: 21)
            #expect(past.photos.isEmpty)
            let far = try await client.search(latitude: place.latitude, longitude: place.longitude, page: .max, perPage: 250)
            #expect(far.photos.isEmpty && far.page == .max && far.total == one.total)
            let empty = DemoPlaces.empty
            let none = try await client.search(latitude: empty.latitude, longitude: empty.longitude, page: 1, perPage: 21)
            #expect(none.photos.isEmpty && none.total == 0 && none.pages == 0)
        }
    }

    @Test func moreThanFiftyPhotosAreAskedForFiftyAtATime() async throws {
        try await withCommonsDouble { double in
            let client = try commonsClient(double)
            let place = DemoPlaces.many
            let page = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 120)
            #expect(page.photos.count == 120)
            let sizes = double.controls.records.filter { $0.kind == "imageinfo" }.map { $0.query["pageids"]!.split(separator: "|").count }
            #expect(sizes == [50, 50, 20])
        }
    }

    @Test func theDoubleGivesNoThumbnailPastTheFiftiethAndTheParserSkipsThose() async throws {
        try await withCommonsDouble { double in
            let client = try commonsClient(double)
            let place = DemoPlaces.many
            let geosearch = try client.geosearchQuery(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 1)
            let hits = try CommonsResponse.hits(try await client.api(geosearch, doing: "test"))
            let ids = Array(hits.prefix(60).map(\.pageID))
            let body = try await client.api(client.imageInfoQuery(ids), doing: "test")
            #expect(try CommonsResponse.photos(body, order: ids).count == 50)
        }
    }

    @Test(arguments: [
        (91.0, 0.0, 1, 21, "latitude"), (Double.nan, 0, 1, 21, "latitude"), (0, 181, 1, 21, "longitude"),
        (0, 0, 0, 21, "pages start at 1"), (0, 0, 1, 0, "1 to 250"), (0, 0, 1, 251, "1 to 250"),
    ])
    func badArgumentsAreRefusedBeforeAnythingIsSent(latitude: Double, longitude: Double, page: Int, perPage: Int, says: String) async throws {
        let client = try CommonsClient(endpoint: "http://127.0.0.1:9/w/api.php", contact: "t@example.org")
        let outcome = await Result { () async throws(PhotoSourceError) in
            try await client.search(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
        }
        guard case .failure(let error) = outcome else { Issue.record("accepted"); return }
        #expect(error.code == .invalidArgument && error.message.contains(says), "\(error)")
    }

    @Test(arguments: [0, 9, 10_001, -5])
    func aRadiusOutsideTheAPIsRangeIsAnErrorNotClamped(radius: Int) {
        #expect(throws: PhotoSourceError.self) { try CommonsClient(radiusMetres: radius) }
    }

    @Test func aThumbnailWidthMustBeAStandardStep() throws {
        #expect(throws: PhotoSourceError.self) { try CommonsClient(thumbnailWidth: 300) }
        #expect(throws: PhotoSourceError.self) { try CommonsClient(contact: "line\nbreak") }
        #expect(throws: PhotoSourceError.self) { try CommonsClient(endpoint: "ftp://example.org/w/api.php") }
        #expect(try CommonsClient(thumbnailWidth: 500).thumbnailWidth == 500)
    }

    @Test func aRequestWithoutAContactIsRefusedByTheDouble() async throws {
        try await withCommonsDouble { double in
            // What any other client meets: the library's default User-Agent has no contact.
            let fetch = HTTPFetch(timeout: .seconds(60), maxBytes: 1 << 20, what: "a probe")
            let answer = try await fetch.get(double.endpoint + "?action=query&format=json", shownURL: double.endpoint)
            #expect(answer.status == 403)
            guard case .failed(let error) = CommonsResponse.verdict(answer, endpoint: double.endpoint) else {
                Issue.record("a 403 was not a failure"); return
            }
            #expect(error.code == .refused && error.message.contains("User-Agent") && error.message.contains("VT_CONTACT"))
        }
    }

    @Test(arguments: [
        (CommonsFault.httpStatus(503), PhotoSourceError.Code.serviceUnavailable, "HTTP 503"),
        (.httpStatus(404), .httpStatus, "HTTP 404"),
        (.apiError(code: "badvalue", info: "Unrecognized value"), .refused, "badvalue: Unrecognized value"),
        (.apiError(code: "readonly", info: "The wiki is in read-only mode"), .serviceUnavailable, "read-only"),
        (.html, .badResponse, "not JSON"),
        (.tooManyRequests(retryAfter: 120), .serviceUnavailable, "wait 120 s"),
        (.maxlag(retryAfter: 90), .serviceUnavailable, "lagging"),
    ])
    func eachFailureOfTheServiceIsAClearError(fault: CommonsFault, code: PhotoSourceError.Code, says: String) async throws {
        try await withCommonsDouble { double in
            double.controls.failNextRequests(with: [fault])
            let client = try commonsClient(double, longestWait: .seconds(10))
            let place = DemoPlaces.few
            let outcome = await Result { () async throws(PhotoSourceError) in
                try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 5)
            }
            guard case .failure(let error) = outcome else { Issue.record("\(fault) was not an error"); return }
            #expect(error.code == code, "\(error)")
            #expect(error.message.contains(says), "\(error.message)")
            // Nothing was left broken: the next search works.
            let page = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 5)
            #expect(page.page == 1)
        }
    }

    @Test(arguments: [CommonsFault.tooManyRequests(retryAfter: 1), .maxlag(retryAfter: 1)])
    func aShortRetryAfterIsWaitedAndTheRequestTriedAgain(fault: CommonsFault) async throws {
        try await withCommonsDouble { double in
            double.controls.failNextRequests(with: [fault])
            // The pauses the client makes, with how many requests the service had seen by then.
            let pauses = Mutex<[(Duration, Int)]>([])
            let client = try commonsClient(double) { wait in
                pauses.withLock { $0.append((wait, double.controls.records.count)) }
            }
            let place = DemoPlaces.few
            let page = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 5)
            #expect(!page.photos.isEmpty)
            #expect(double.controls.records.map(\.kind) == ["geosearch", "geosearch", "imageinfo"])
            // Honoured, not skipped: the client paused the second asked for between the two tries.
            #expect(pauses.withLock { $0.map(\.0) } == [.seconds(1)])
            #expect(pauses.withLock { $0.map(\.1) } == [1])
        }
    }

    @Test func retriesAreBoundedSoABusyServiceEndsInAnError() async throws {
        try await withCommonsDouble { double in
            double.controls.failNextRequests(with: Array(repeating: .maxlag(retryAfter: 0), count: 5))
            let client = try commonsClient(double, retries: 2)
            let outcome = await Result { () async throws(PhotoSourceError) in
                try await client.search(latitude: 1, longitude: 1, page: 1, perPage: 5)
            }
            guard case .failure(let error) = outcome else { Issue.record("accepted"); return }
            #expect(error.code == .serviceUnavailable && error.message.contains("try again later"))
            #expect(double.controls.records.count == 3)
        }
    }

    /// Twelve downloads started together, as the pipeline starts six and more: the double holds
    /// each request until the test lets it go, so the client's three at once show as three held
    /// (a client that allowed more would have more held; one that allowed fewer, fewer).
    // The limit is a guard against a hang, not a measure: on CI's two cores the suite's file-heavy
    // tests took it past two minutes once (docs/DEVELOPING.md).
    @Test(.timeLimit(.minutes(5))) func neverMoreThanThreeRequestsAtOnce() async throws {
        try await withCommonsDouble { double in
            let source = CommonsPhotoSource(client: try commonsClient(double))
            let place = DemoPlaces.many
            let page = try await source.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 12)
            #expect(page.photos.count == 12)
            double.controls.holdRequests()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for photo in page.photos { group.addTask { try await source.image(at: photo.url).count } }
                var released = 0
                while released < page.photos.count {
                    let inFlight = min(3, page.photos.count - released)
                    await double.controls.heldRequests(reach: inFlight)
                    #expect(double.controls.heldRequests == inFlight, "after \(released) answered")
                    released += double.controls.releaseHeld()
                }
                for try await count in group { #expect(count > 0) }
            }
            #expect(double.controls.records.filter { $0.kind == "thumbnail" }.count == 12)
            #expect(double.controls.mostAtOnce == 3)
        }
    }

    @Test func aFailedThumbnailIsAClearError() async throws {
        try await withCommonsDouble { double in
            let source = CommonsPhotoSource(client: try commonsClient(double))
            let place = DemoPlaces.few
            let page = try await source.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 3)
            double.controls.failThumbnails(with: 429)
            let outcome = await Result { () async throws(PhotoSourceError) in try await source.image(at: page.photos[0].url) }
            guard case .failure(let error) = outcome else { Issue.record("accepted"); return }
            #expect(error.message.contains("HTTP 429"))
        }
    }

    @Test func htmlBecomesPlainText() {
        #expect(HTMLText.plain("<a href=\"x\" title=\"User:Ann\">Ann &amp; Bo</a>\n<br/>(talk)") == "Ann & Bo (talk)")
        #expect(HTMLText.plain("&#72;&#x69; &lt;b&gt; &unknown; &#0;") == "Hi <b> &unknown; &#0;")
        #expect(HTMLText.plain("<span") == "")
        #expect(HTMLText.plain(String(repeating: "a", count: 500)).count == 300)
    }

    @Test func lenientReadingOfBothPageShapesAndOddFields() throws {
        let keyed = """
            {"query":{"pages":{"7":{"pageid":"7","title":"File:A.jpg","imageinfo":[{"mime":"image/jpeg",
            "thumburl":"https://u.example/a.jpg","thumbwidth":"330","thumbheight":200,"user":"U",
            "extmetadata":{"LicenseUrl":{"value":"//creativecommons.org/licenses/by/4.0"}}}]},
            "8":{"pageid":8,"title":"File:B.tif","imageinfo":[{"mime":"image/tiff","thumburl":"https://u.example/b.jpg"}]},
            "9":{"pageid":9,"title":"File:C.jpg","imageinfo":[{"mime":"image/jpeg"}]},
            "-1":{"title":"File:Gone.jpg","missing":""}}}}
            """
        let photos = try CommonsResponse.photos(Array(keyed.utf8), order: [9, 8, 7])
        #expect(photos.map(\.id) == ["7"])
        #expect(photos[0].title == "A" && photos[0].width == 330 && photos[0].credit.creator == "U")
        #expect(photos[0].credit.licenceURL == "https://creativecommons.org/licenses/by/4.0")
        let listed = #"{"query":{"pages":[{"pageid":7,"imageinfo":[{"mime":"image/png","thumburl":"https://u.example/a.png"}]}]}}"#
        #expect(try CommonsResponse.photos(Array(listed.utf8), order: [7]).count == 1)
        #expect(throws: PhotoSourceError.self) { try CommonsResponse.photos(Array("[1]".utf8), order: []) }
        #expect(throws: PhotoSourceError.self) { try CommonsResponse.hits(Array("{\"query\":{\"geosearch\":3}}".utf8)) }
        #expect(try CommonsResponse.hits(Array("{\"batchcomplete\":\"\"}".utf8)).isEmpty)
    }
}
