import DemoPhotoServer
import Foundation
import Testing
@testable import PhotoAnswers
@testable import PhotoSources

@Suite struct FlickrClientTests {
    @Test func theSearchURLCarriesEveryParameterTheAPINeeds() throws {
        let client = FlickrClient(key: try FlickrAPIKey("k3y"), endpoint: "https://api.flickr.com/services/rest/", radiusKilometres: 5)
        let url = try client.searchURL(latitude: 48.8584, longitude: 2.2945, page: 3, perPage: 21)
        let items = URLComponents(string: url)!.queryItems!
        let query = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
        #expect(query == [
            "method": "flickr.photos.search", "api_key": "k3y", "lat": "48.8584", "lon": "2.2945", "radius": "5",
            "radius_units": "km", "min_upload_date": "1072915200", "safe_search": "1", "content_type": "1",
            "media": "photos", "extras": "url_m,url_q,owner_name,license,date_taken", "per_page": "21", "page": "3", "format": "json",
            "nojsoncallback": "1",
        ])
    }

    @Test(arguments: [
        (91.0, 0.0, 1, 21, "latitude"), (Double.nan, 0, 1, 21, "latitude"), (0, 180.5, 1, 21, "longitude"),
        (0, -Double.infinity, 1, 21, "longitude"), (0, 0, 0, 21, "pages start at 1"), (0, 0, 1, 0, "1 to 250"),
        (0, 0, 1, 251, "1 to 250"),
    ])
    func badArgumentsAreRefusedBeforeAnythingIsSent(latitude: Double, longitude: Double, page: Int, perPage: Int, says: String) async throws {
        // Port 9 (discard) on loopback: nothing listens; a refusal must come before any connection.
        let client = FlickrClient(key: try FlickrAPIKey("k"), endpoint: "http://127.0.0.1:9/services/rest/")
        do {
            _ = try await client.search(latitude: latitude, longitude: longitude, page: page, perPage: perPage)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(says), "\(error.message)")
        }
    }

    @Test(arguments: [0.0, 32.0, -1.0])
    func theRadiusMustBeUnderThirtyTwoKilometres(radius: Double) throws {
        let client = FlickrClient(key: try FlickrAPIKey("k"), radiusKilometres: radius)
        #expect(throws: PhotoSourceError.self) { try client.searchURL(latitude: 0, longitude: 0, page: 1, perPage: 1) }
    }

    @Test func aSearchOverHTTPGivesThePagesPhotosWithTheirImageURLs() async throws {
        try await withDemoServer { server in
            let client = try demoClient(server)
            let place = DemoPlaces.many
            let total = DemoCatalogue().photoCount(latitude: place.latitude, longitude: place.longitude)
            let page = try await client.search(latitude: place.latitude, longitude: place.longitude, page: 2, perPage: 21)
            #expect(page.page == 2 && page.perPage == 21 && page.total == total)
            #expect(page.pages == (total + 20) / 21)
            #expect(page.photos.count == 21)
            #expect(page.photos.allSatisfy { $0.url.hasPrefix(server.origin + "/images/") && $0.url.hasSuffix("_m.png") })
            #expect(page.photos.allSatisfy { $0.width == 96 && $0.height == 72 })
            let expected = DemoCatalogue().photos(latitude: place.latitude, longitude: place.longitude, page: 2, perPage: 21)
            #expect(page.photos.map(\.id) == expected.map(\.id))
            #expect(server.controls.searches.last?.extras == "url_m,url_q,owner_name,license,date_taken")
        }
    }

    @Test func theSourceCreditsPhotosWithTheLicenceListItAskedForOnce() async throws {
        try await withDemoServer { server in
            let source = FlickrPhotoSource(client: try demoClient(server))
            let place = DemoPlaces.few
            for _ in 1...2 {
                let page = try await source.search(latitude: place.latitude, longitude: place.longitude, page: 1, perPage: 3)
                #expect(page.photos.allSatisfy {
                    $0.credit.creator == "Offline demo service (generated image)"
                        && $0.credit.licenceName == "Generated image, no rights reserved"
                        && $0.credit.pageURL == "\(server.origin)/photos/12345678@N00/\($0.id)"
                })
            }
            #expect(source.licenceCache.isLoaded)
            #expect(server.controls.searches.count == 2)
            // The page the credit links to exists.
            let page = try await ImageDownloader.pageText(server.origin + "/photos/12345678@N00/12345678901")
            #expect(page.contains("generated image"))
        }
    }

    @Test func placesWithNoPhotosAndPagesPastTheFourThousandthResultAreEmpty() async throws {
        try await withDemoServer { server in
            let client = try demoClient(server)
            let empty = try await client.search(latitude: DemoPlaces.empty.latitude, longitude: DemoPlaces.empty.longitude, page: 1, perPage: 21)
            #expect(empty.photos.isEmpty && empty.total == 0 && empty.pages == 0)
            let big = DemoPlaces.beyondServed
            let last = try await client.search(latitude: big.latitude, longitude: big.longitude, page: 16, perPage: 250)
            #expect(last.photos.count == 250)
            let past = try await client.search(latitude: big.latitude, longitude: big.longitude, page: 17, perPage: 250)
            #expect(past.photos.isEmpty && past.total > 4_000)
        }
    }

    @Test func imagesAreRealPNGFilesThatEndWhereTheySay() async throws {
        try await withDemoServer { server in
            let page = try await demoClient(server).search(
                latitude: DemoPlaces.few.latitude, longitude: DemoPlaces.few.longitude, page: 1, perPage: 5)
            let bytes = try await ImageDownloader().image(at: page.photos[0].url)
            let png = try PNGReader(bytes)
            #expect(png.width == 96 && png.height == 72)
            #expect(png.pixels.count == 96 * 72 * 3)
            let again = try await ImageDownloader().image(at: page.photos[0].url)
            #expect(again == bytes)
            let other = try await ImageDownloader().image(at: page.photos[1].url)
            #expect(other != bytes)
        }
    }

    @Test func aWrongKeyIsAnInvalidKeyErrorThatNeverShowsTheKey() async throws {
        try await withDemoServer(requiredKey: "the-right-key") { server in
            let client = try demoClient(server, key: "the-wrong-key")
            do {
                _ = try await client.search(latitude: 1, longitude: 1, page: 1, perPage: 1)
                Issue.record("a wrong key was accepted")
            } catch let error as PhotoSourceError {
                #expect(error.code == .invalidKey)
                #expect(error.message.contains("FLICKR_API_KEY"))
                #expect(!error.message.contains("the-wrong-key") && !error.description.contains("the-wrong-key"))
            }
            let right = try demoClient(server, key: "the-right-key")
            _ = try await right.search(latitude: 1, longitude: 1, page: 1, perPage: 1)
        }
    }

    @Test(arguments: [
        (DemoFault.httpStatus(500), PhotoSourceError.Code.serviceUnavailable, "HTTP 500"),
        (.httpStatus(404), .httpStatus, "HTTP 404"),
        (.statFail(code: 105, message: "Service currently unavailable"), .serviceUnavailable, "Service currently unavailable"),
        (.statFail(code: 100, message: "Invalid API Key (Key has expired)"), .invalidKey, "Key has expired"),
        (.truncated, .badResponse, "not JSON"),
        (.html, .badResponse, "<!DOCTYPE html>"),
        (.cutConnection, .network, "closed before the whole answer"),
        (.delay(.seconds(5)), .timeout, "did not answer within 1.5 s"),
    ])
    func eachFailureOfTheServiceIsAClearError(fault: DemoFault, code: PhotoSourceError.Code, says: String) async throws {
        try await withDemoServer { server in
            server.controls.failNextSearches(with: [fault])
            let client = try demoClient(server, key: "a-secret-key-value", timeout: timeout(for: fault))
            do {
                _ = try await client.search(latitude: 1, longitude: 1, page: 1, perPage: 5)
                Issue.record("\(fault) was not an error")
            } catch let error as PhotoSourceError {
                #expect(error.code == code, "\(error)")
                #expect(error.message.contains(says), "\(error.message)")
                #expect(!error.message.contains("a-secret-key-value"))
            }
            // The next search, without a fault, works: nothing was left broken. (After the
            // delay, with a patient client: 1.5 s is too short on a loaded machine.)
            let next = if case .delay = fault { try demoClient(server) } else { client }
            let page = try await next.search(latitude: 1, longitude: 1, page: 1, perPage: 5)
            #expect(page.page == 1)
        }
    }

    @Test func aTLSFailureIsNamedAsOne() async throws {
        // An https endpoint that answers in plain text: the TLS handshake fails.
        let listener = try PlainTextListener()
        let client = FlickrClient(
            key: try FlickrAPIKey("k"), endpoint: "https://127.0.0.1:\(listener.port)/services/rest/", timeout: .seconds(5))
        let outcome = await Result { () async throws(PhotoSourceError) -> PhotoSearchPage in
            try await client.search(latitude: 1, longitude: 1, page: 1, perPage: 5)
        }
        listener.stop()
        guard case .failure(let error) = outcome else {
            Issue.record("a TLS handshake with a plain-text server succeeded")
            return
        }
        #expect(error.code == .tls, "\(error)")
        #expect(error.message.contains("secure connection"))
    }

    @Test func aServiceThatIsNotThereIsANetworkError() async throws {
        let client = FlickrClient(key: try FlickrAPIKey("k"), endpoint: "http://127.0.0.1:9/services/rest/", timeout: .seconds(1))
        do {
            _ = try await client.search(latitude: 1, longitude: 1, page: 1, perPage: 5)
            Issue.record("a search with nothing listening succeeded")
        } catch {
            #expect(error.code == .network, "\(error)")
            #expect(error.message.contains("could not be reached"), "\(error)")
        }
    }

    @Test(arguments: [
        (DemoFault.httpStatus(503), PhotoSourceError.Code.serviceUnavailable), (.httpStatus(403), .httpStatus),
        (.truncated, .badResponse), (.cutConnection, .network), (.delay(.seconds(5)), .timeout),
    ])
    func imageDownloadFailuresAreClearErrors(fault: DemoFault, code: PhotoSourceError.Code) async throws {
        try await withDemoServer { server in
            let page = try await demoClient(server).search(latitude: DemoPlaces.few.latitude, longitude: DemoPlaces.few.longitude, page: 1, perPage: 1)
            server.controls.failImages { number, _ in number == 0 ? fault : nil }
            let downloader = ImageDownloader(timeout: timeout(for: fault))
            do {
                _ = try await downloader.image(at: page.photos[0].url)
                Issue.record("\(fault) was not an error")
            } catch let error as PhotoSourceError {
                #expect(error.code == code, "\(error)")
            }
            let next = if case .delay = fault { ImageDownloader(timeout: .seconds(60)) } else { downloader }
            _ = try await next.image(at: page.photos[0].url)
        }
    }

    @Test func anImageLargerThanAllowedIsRefused() async throws {
        try await withDemoServer { server in
            let page = try await demoClient(server).search(latitude: DemoPlaces.few.latitude, longitude: DemoPlaces.few.longitude, page: 1, perPage: 1)
            do {
                _ = try await ImageDownloader(maxBytes: 1_000).image(at: page.photos[0].url)
                Issue.record("accepted")
            } catch let error as PhotoSourceError {
                #expect(error.code == .tooLarge)
            }
        }
    }
}
