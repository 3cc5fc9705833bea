import DemoPhotoServer
import Foundation
import PhotoServiceDoubles
import Testing
@testable import PhotoAnswers
@testable import PhotoSources

/// Paging past the geosearch's 500 hits through the wider search (`list=search` with
/// `nearcoord:`), over real HTTP to the Commons double.
@Suite struct CommonsWiderSearchTests {
    static let place = (latitude: 47.3769, longitude: 8.5417)

    /// A catalogue in which the place has exactly `count` files (of which 7 in 10 are bitmaps).
    static func catalogue(_ count: Int) -> DemoCatalogue {
        var catalogue = DemoCatalogue()
        catalogue.setPhotoCount(count, latitude: place.latitude, longitude: place.longitude)
        return catalogue
    }

    static func page(_ client: CommonsClient, _ page: Int, perPage: Int = 21) async throws -> PhotoSearchPage {
        try await client.search(latitude: place.latitude, longitude: place.longitude, page: page, perPage: perPage)
    }

    /// The page ids the double's wider search gives, in its order, read without the client.
    static func rawSearch(_ client: CommonsClient) async throws -> [Int] {
        var ids: [Int] = []
        var offset: Int? = 0
        while let next = offset {
            let body = try await client.api(
                client.widerQuery(latitude: place.latitude, longitude: place.longitude, offset: next, limit: 500), doing: "test")
            let batch = try CommonsResponse.searchBatch(body)
            ids += batch.hits.map(\.pageID)
            offset = batch.nextOffset
        }
        return ids
    }

    @Test func everyPageOfAPlaceOf1500FilesIsNewAndTheListingEndsWhereTheFilesDo() async throws {
        let catalogue = Self.catalogue(1_500)
        try await withCommonsDouble(catalogue: catalogue) { double in
            let client = try commonsClient(double)
            let near = bitmapCount(Self.place, catalogue: catalogue, files: 500)
            let all = bitmapCount(Self.place, catalogue: catalogue)
            #expect(near == 350 && all == 1_050)
            let first = try await Self.page(client, 1)
            #expect(first.total == all && first.pages == 50)
            var seen = Set(first.photos.map(\.id))
            for number in 2...first.pages {
                let page = try await Self.page(client, number)
                #expect(page.photos.count == 21, "page \(number)")
                #expect(page.total == all && page.pages == 50, "page \(number)")
                let ids = Set(page.photos.map(\.id))
                #expect(ids.isDisjoint(with: seen), "page \(number) repeats a photo")
                seen.formUnion(ids)
            }
            // Every bitmap of the place was shown once: the 350 nearest, then the 700 further.
            #expect(seen.count == all)
            let past = try await Self.page(client, 51)
            #expect(past.photos.isEmpty && past.total == all && past.pages == 50)
        }
    }

    @Test func theWiderSearchNamesTheNearestFilesAgainAndTheListingHoldsEachOnce() async throws {
        try await withCommonsDouble(catalogue: Self.catalogue(1_500)) { double in
            let client = try commonsClient(double)
            let raw = try await Self.rawSearch(client)
            let geosearch = try client.geosearchQuery(latitude: Self.place.latitude, longitude: Self.place.longitude, page: 1, perPage: 1)
            let nearest = Set(try CommonsResponse.hits(try await client.api(geosearch, doing: "test")).map(\.pageID))
            // What makes de-duplication necessary: the search repeats the geosearch's files,
            // spread through its order.
            #expect(nearest.isSubset(of: raw) && raw.count == 1_050)
            #expect(raw.prefix(500).contains { nearest.contains($0) })

            // Page 17 holds the last 14 of the 350 nearest, then the first 7 new ones of the search.
            let page = try await Self.page(client, 17)
            let ids = page.photos.compactMap { Int($0.id) }
            #expect(ids.count == 21)
            #expect(ids.prefix(14).allSatisfy { nearest.contains($0) })
            #expect(Array(ids.suffix(7)) == Array(raw.filter { !nearest.contains($0) }.prefix(7)))
        }
    }

    @Test func theWiderSearchIsAskedAsDocumentedAndFollowsItsContinuation() async throws {
        try await withCommonsDouble(catalogue: Self.catalogue(1_500)) { double in
            let client = try commonsClient(double)
            _ = try await Self.page(client, 50)
            let searches = double.controls.records.filter { $0.kind == "search" }.map(\.query)
            // 700 new files are wanted for page 50; a batch of 500 holds about two thirds new ones.
            #expect(searches.map { $0["sroffset"] } == ["0", "500", "1000"])
            let lat = Self.place.latitude, lon = Self.place.longitude
            #expect(searches.allSatisfy { $0["srsearch"] == "nearcoord:10km,\(lat),\(lon) filetype:bitmap" })
            #expect(searches.allSatisfy {
                $0["srnamespace"] == "6" && $0["srlimit"] == "500" && $0["srprop"] == "" && $0["srsort"] == "create_timestamp_asc"
                    && $0["maxlag"] == "5" && $0["format"] == "json"
            })
            #expect(double.controls.records.allSatisfy { $0.userAgent?.contains("tests@example.org") == true })
        }
    }

    @Test func aRadiusThatIsNotWholeKilometresIsSentInMetres() throws {
        let client = try CommonsClient(contact: "t@example.org", radiusMetres: 2_500)
        let query = client.widerQuery(latitude: 1.5, longitude: -2.25, offset: 0, limit: 500)
        #expect(query.first { $0.name == "srsearch" }?.value == "nearcoord:2500m,1.5,-2.25 filetype:bitmap")
    }

    @Test func aPlaceOfExactlyTheGeosearchsFilesStopsThere() async throws {
        // 500 files: the geosearch is full, but the wider search finds nothing it did not name.
        let catalogue = Self.catalogue(500)
        try await withCommonsDouble(catalogue: catalogue) { double in
            let client = try commonsClient(double)
            let first = try await Self.page(client, 1)
            #expect(first.total == 350 && first.pages == 17)
            let last = try await Self.page(client, 17)
            #expect(last.photos.count == 14 && last.total == 350)
            let past = try await Self.page(client, 18)
            #expect(past.photos.isEmpty && past.total == 350)
        }
    }

    @Test func aPlaceBeyondTheSearchsDepthIsReadTo10000AndNoFurther() async throws {
        // 15,000 files, 10,500 bitmaps: more than the 10,000 the search serves.
        try await withCommonsDouble(catalogue: Self.catalogue(15_000)) { double in
            let client = try commonsClient(double)
            let first = try await Self.page(client, 1, perPage: 250)
            #expect(first.total == 10_000)
            // Page 42 ends 10,500 deep in the listing: every batch of the search is read.
            let deep = try await Self.page(client, 42, perPage: 250)
            let offsets = double.controls.records.filter { $0.kind == "search" && $0.query["srlimit"] == "500" }
                .compactMap { $0.query["sroffset"].flatMap { Int($0) } }
            #expect(offsets == Array(stride(from: 0, to: 10_000, by: 500)))
            // Reachable: the 350 nearest and the search's first 10,000 less those among them.
            #expect((10_000...10_350).contains(deep.total))
            #expect(deep.pages == (deep.total + 249) / 250)
            // The count was the search's until the end was read; now it is exact, and stays so.
            let past = try await Self.page(client, deep.pages + 1, perPage: 250)
            #expect(past.photos.isEmpty && past.total == deep.total)
            // The double refuses what the client never asks: results 10,000 deep.
            let refused = await Result { () async throws(PhotoSourceError) in
                try await client.api(
                    client.widerQuery(latitude: Self.place.latitude, longitude: Self.place.longitude, offset: 10_000, limit: 10),
                    doing: "test")
            }
            guard case .failure(let error) = refused else { Issue.record("an offset of 10,000 was answered"); return }
            #expect(error.code == .refused && error.message.contains("cirrussearch-offset-too-large"))
        }
    }

    @Test func aHugePageNumberAsksOnlyForTheCount() async throws {
        try await withCommonsDouble(catalogue: Self.catalogue(1_500)) { double in
            let client = try commonsClient(double)
            let far = try await Self.page(client, .max, perPage: 250)
            #expect(far.photos.isEmpty && far.total == 1_050 && far.page == .max)
            #expect(double.controls.records.map(\.kind) == ["geosearch", "search"])
            #expect(double.controls.records[1].query["srlimit"] == "1")
        }
    }

    @Test(arguments: [
        (CommonsFault.httpStatus(503), PhotoSourceError.Code.serviceUnavailable, "HTTP 503"),
        (.apiError(code: "cirrussearch-backend-error", info: "We could not complete your search"), .refused, "cirrussearch-backend-error"),
        (.html, .badResponse, "not JSON"),
        (.maxlag(retryAfter: 90), .serviceUnavailable, "lagging"),
    ])
    func aFailedWiderSearchIsAClearErrorAndTheNextTryWorks(fault: CommonsFault, code: PhotoSourceError.Code, says: String) async throws {
        try await withCommonsDouble(catalogue: Self.catalogue(1_500)) { double in
            let client = try commonsClient(double, longestWait: .seconds(10))
            // The second batch fails: what the first found is not kept as if it were all.
            // (Page 40 wants 490 new files, more than the first batch of 500 holds.)
            double.controls.failNextSearches(with: [.delay(.zero), fault])
            let outcome = await Result { () async throws(PhotoSourceError) in
                try await client.search(latitude: Self.place.latitude, longitude: Self.place.longitude, page: 40, perPage: 21)
            }
            guard case .failure(let error) = outcome else { Issue.record("\(fault) was not an error"); return }
            #expect(error.code == code && error.message.contains(says), "\(error)")
            let page = try await Self.page(client, 40)
            #expect(page.photos.count == 21)
            #expect(double.controls.records.filter { $0.kind == "search" }.count == 4)
        }
    }

    @Test(arguments: [
        (["srlimit": "500"], "missingparam"), (["srsearch": "nearcoord:47.3769,8.5417", "srlimit": "many"], "badinteger"),
        (["srsearch": "nearcoord:47.3769,8.5417", "srlimit": "0"], "badinteger"),
        (["srsearch": "nearcoord:47.3769,8.5417", "sroffset": "-1"], "badinteger"),
        (["srsearch": "nearcoord:47.3769,8.5417", "sroffset": "12000"], "cirrussearch-offset-too-large"),
    ])
    func theDoubleRefusesBadParametersWithHTTP200(parameters: [String: String], code: String) async throws {
        try await withCommonsDouble(catalogue: Self.catalogue(1_500)) { double in
            let client = try commonsClient(double)
            let query = [URLQueryItem(name: "action", value: "query"), URLQueryItem(name: "list", value: "search"),
                URLQueryItem(name: "srnamespace", value: "6")] + parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            let outcome = await Result { () async throws(PhotoSourceError) in try await client.api(query, doing: "test") }
            guard case .failure(let error) = outcome else { Issue.record("\(parameters) was answered"); return }
            #expect(error.code == .refused && error.message.contains(code), "\(error)")
        }
    }

    @Test func theDoubleLowersALimitOver500AndFindsNothingForACoordinateItCannotRead() async throws {
        try await withCommonsDouble(catalogue: Self.catalogue(1_500)) { double in
            let client = try commonsClient(double)
            func ask(_ search: String, limit: String) async throws -> (CommonsResponse.SearchBatch, String) {
                let body = try await client.api(
                    [URLQueryItem(name: "action", value: "query"), URLQueryItem(name: "list", value: "search"),
                     URLQueryItem(name: "srnamespace", value: "6"), URLQueryItem(name: "srsearch", value: search),
                     URLQueryItem(name: "srlimit", value: limit)], doing: "test")
                return (try CommonsResponse.searchBatch(body), String(decoding: body, as: UTF8.self))
            }
            let (lowered, text) = try await ask("nearcoord:10km,47.3769,8.5417", limit: "800")
            // Every file of the place (SVGs, PDFs and videos too) without filetype:, 500 of them.
            #expect(lowered.totalHits == 1_500 && lowered.nextOffset == 500 && text.contains("may not be over 500"))
            let (unread, warned) = try await ask("nearcoord:10miles,47.3769,8.5417 filetype:bitmap", limit: "10")
            #expect(unread.hits.isEmpty && unread.totalHits == 0 && warned.contains("nearcoord"))
            let (bitmaps, _) = try await ask("nearcoord:47.3769,8.5417 filetype:bitmap", limit: "10")
            #expect(bitmaps.totalHits == 1_050 && bitmaps.hits.count == 10)
        }
    }

    @Test func readingOfSearchAnswers() throws {
        let answer = """
            {"batchcomplete":"","continue":{"sroffset":"500","continue":"-||"},"warnings":{"search":{"*":"x"}},
            "query":{"searchinfo":{"totalhits":"1234"},"search":[{"ns":6,"title":"File:A.jpg","pageid":7},
            {"ns":6,"title":"File:B.tif","pageid":8},{"ns":0,"title":"C.jpg","pageid":9},{"ns":6,"title":"File:A.jpg","pageid":"7"},
            {"ns":6,"title":"File:D.PNG","pageid":"10"},{"ns":6,"title":"File:E.jpg","pageid":-3},{"title":"File:F.gif"}]}}
            """
        let batch = try CommonsResponse.searchBatch(Array(answer.utf8))
        #expect(batch.hits.map(\.pageID) == [7, 10])
        #expect(batch.totalHits == 1_234 && batch.nextOffset == 500)
        let last = try CommonsResponse.searchBatch(Array(#"{"query":{"search":[]}}"#.utf8))
        #expect(last.hits.isEmpty && last.totalHits == nil && last.nextOffset == nil)
        let backwards = try CommonsResponse.searchBatch(Array(#"{"continue":{"sroffset":-5},"query":{"searchinfo":{"totalhits":-1}}}"#.utf8))
        #expect(backwards.nextOffset == nil && backwards.totalHits == 0)
        #expect(throws: PhotoSourceError.self) { try CommonsResponse.searchBatch(Array(#"{"query":{"search":{"a":1}}}"#.utf8)) }
        #expect(throws: PhotoSourceError.self) { try CommonsResponse.searchBatch(Array(#"{"limits":{}}"#.utf8)) }
        #expect(throws: PhotoSourceError.self) { try CommonsResponse.searchBatch(Array("<html>".utf8)) }
    }
}
