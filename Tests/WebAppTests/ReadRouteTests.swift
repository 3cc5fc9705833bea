import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import VirtualTourist
import WebApp

/// Time travel, pages of the log, differences, live updates and the pages themselves.
@Suite struct ReadRouteTests {
    @Test func stateAndAlbumAtAnySequenceNumber() async throws {
        try await WebHarness.with { web in
            let pin = try await web.store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
            let done = try await web.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            let now = try await web.get("/api/state").json()
            #expect(now["seq"] as? Int == Int(done.sequence) || (now["seq"] as? Int ?? 0) >= Int(done.sequence))
            let pins = try #require(now["pins"] as? [[String: Any]])
            #expect(pins.first?["status"] as? String == "complete")
            #expect(pins.first?["downloaded"] as? Int == 12)

            let atDrop = try await web.get("/api/state?at=1").json()
            #expect(atDrop["seq"] as? Int == 1)
            #expect((atDrop["pins"] as? [[String: Any]])?.first?["status"] as? String == "not-requested")
            let empty = try await web.get("/api/state?at=0").json()
            #expect((empty["pins"] as? [Any])?.isEmpty == true)

            let listed = try #require(done.pins[pin]?.album.listedAt)
            let album = try await web.get("/api/pins/\(pin)?at=\(listed)").json()["album"] as? [String: Any]
            #expect(album?["status"] as? String == "downloading")
            #expect((album?["photos"] as? [[String: Any]])?.allSatisfy { $0["state"] as? String == "placeholder" } == true)
            #expect(try await web.get("/api/pins/\(pin)?at=0").status == 404)
            // Each photo carries the credit its listing recorded, for the page's credit line.
            let photos = try #require(try await web.get("/api/pins/\(pin)").json()["album"] as? [String: Any])["photos"] as? [[String: Any]]
            let credits = (photos ?? []).compactMap { $0["credit"] as? [String: Any] }
            #expect(credits.count == 12)
            #expect(credits.allSatisfy {
                ($0["creator"] as? String)?.contains("generated") == true && ($0["page_url"] as? String)?.contains("/photos/") == true
            })

            let diff = try await web.get("/api/diff?from=0&to=\(done.sequence)").json()
            #expect((diff["pins_added"] as? [Any])?.count == 1)
            #expect((diff["photos_added"] as? [Any])?.count == 12)

            // Why (docs/WHY.md): the events behind a photo, the pin's place, the album, at a point.
            let photo = try await web.get("/api/why?fact=photo&pin=\(pin)&slot=0").json()
            let photoBecause = try #require(photo["because"] as? [[String: Any]])
            #expect(photo["question"] as? String == "photo" && (photo["fact"] as? String)?.contains("is downloaded") == true)
            #expect(photoBecause.map { $0["type"] as? String } == ["PhotoDownloaded", "PhotosListed"])
            let place = try await web.get("/api/why?fact=pin&pin=\(pin)").json()
            #expect((place["because"] as? [[String: Any]])?.first?["seq"] as? Int == 1)
            let then = try await web.get("/api/why?fact=album&pin=\(pin)&at=\(listed)").json()
            #expect(then["at"] as? Int == Int(listed) && (then["fact"] as? String)?.contains("downloading 0 of 12") == true)
            #expect((then["because"] as? [[String: Any]])?.first?["type"] as? String == "PhotosListed")
        }
    }

    @Test func eventsComeInPagesAndFilter() async throws {
        try await WebHarness.with { web in
            let pin = try await web.store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
            let done = try await web.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            _ = try await web.store.dropPin(at: Coordinate(latitude: 0, longitude: 0))
            let first = try await web.get("/api/events?from=1&limit=5").json()
            let events = try #require(first["events"] as? [[String: Any]])
            #expect(events.map { $0["seq"] as? Int } == [1, 2, 3, 4, 5])
            #expect(events.first?["type"] as? String == "PinDropped")
            #expect(first["next"] as? Int == 6)
            let downloads = try await web.get("/api/events?type=PhotoDownloaded&limit=1000").json()
            #expect((downloads["events"] as? [[String: Any]])?.count == 12)
            #expect(downloads["next"] == nil)
            let onePin = try await web.get("/api/events?pin=\(pin)&limit=1000").json()
            #expect((onePin["events"] as? [[String: Any]])?.allSatisfy { $0["pin"] as? String == pin.description } == true)
            #expect((onePin["events"] as? [Any])?.count ?? 0 >= Int(done.sequence))
        }
    }

    @Test func liveUpdatesNameThePinsThatChanged() async throws {
        try await WebHarness.with { web in
            var request = HTTPClientRequest(url: web.server.origin + "/api/live")
            request.method = .GET
            let response = try await web.client.execute(request, timeout: .seconds(60))
            #expect(response.headers["Content-Type"].first == "text/event-stream; charset=utf-8")
            var received = ""
            var pin: PinID?
            for try await chunk in response.body {
                received += String(buffer: chunk)
                if pin == nil, received.contains("event: hello") {
                    #expect(received.contains("data: {\"seq\":0}"))
                    pin = try await web.store.dropPin(at: Coordinate(latitude: 10, longitude: 20))
                }
                if let pin, received.contains("\"pins\":[\"\(pin)\"]"), received.contains(": keep-alive") { break }
            }
            let dropped = try #require(pin)
            #expect(received.contains("event: change\ndata: {\"first\":1,\"seq\":1,\"pins\":[\"\(dropped)\"],\"region\":false}"))
            #expect(web.server.liveStreams <= 1)
        }
    }

    /// A sync shows another device's photos as soon as it takes their events and stores their
    /// bytes after: the open album hears which photos came, and for which pins.
    @Test func liveUpdatesNameThePhotosASyncStoredAfterTheirEvents() async throws {
        try await WebHarness.with { web in
            let pin = try await web.store.dropPin(at: Coordinate(latitude: 48.8584, longitude: 2.2945))
            let done = try await web.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            let digest = try #require(done.pins[pin]?.album.slots.first?.digest)
            var request = HTTPClientRequest(url: web.server.origin + "/api/live")
            request.method = .GET
            let response = try await web.client.execute(request, timeout: .seconds(60))
            var received = ""
            var announced = false
            for try await chunk in response.body {
                received += String(buffer: chunk)
                if !announced, received.contains("event: hello") {
                    web.store.photosArrived([digest])
                    announced = true
                }
                if received.contains("event: photos") && received.hasSuffix("\n\n") { break }
            }
            #expect(received.contains("event: photos\ndata: {\"pins\":[\"\(pin)\"],\"photos\":[\"\(digest)\"]}\n\n"), "\(received)")
            #expect(!received.contains("event: change"), "no event was appended: \(received)")
        }
    }

    @Test func pagesAreServedWithTheirPolicy() async throws {
        try await WebHarness.with { web in
            for path in ["/", "/album", "/time"] {
                let page = try await web.get(path)
                #expect(page.status == 200, "\(path)")
                #expect(page.headers["Content-Type"].first == "text/html; charset=utf-8")
                #expect(page.headers["Content-Security-Policy"].first?.contains("default-src 'self'") == true)
                #expect(page.text.contains("/leaflet/leaflet.js"))
            }
            #expect(try await web.get("/assets/map.js").text.contains("touch"))
            #expect(try await web.get("/leaflet/leaflet.js").text == "/* leaflet stand-in */")
            let config = try await web.get("/api/config").json()
            #expect(config["tiles"] == nil)
            #expect((config["event_types"] as? [String])?.contains("PinDropped") == true)
        }
    }

    @Test func anAccessTokenGuardsEveryRequest() async throws {
        let token = "correct-horse-battery-staple"
        try await WebHarness.with(configure: { $0.accessToken = token }) { web in
            #expect(web.server.url.hasSuffix("/?token=\(token)"))
            #expect(try await web.get("/api/state").status == 401)
            #expect(try await web.get("/").status == 401)
            #expect(try await web.get("/api/state", headers: [("Authorization", "Bearer wrong-token-wrong-token")]).status == 401)
            #expect(try await web.get("/api/state", headers: [("Authorization", "Bearer \(token)")]).status == 200)
            let visit = try await web.get("/album?token=\(token)")
            #expect(visit.status == 303)
            #expect(visit.headers["Location"].first == "/album")
            let cookie = try #require(visit.headers["Set-Cookie"].first)
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let pair = String(cookie.prefix { $0 != ";" })
            #expect(try await web.get("/api/state", headers: [("Cookie", pair)]).status == 200)
            #expect(try await web.get("/?token=nope-nope-nope-nope").status == 401)
        }
    }

    @Test func optionsThatCannotServeAreRefusedBeforeListening() async throws {
        var open = WebOptions()
        open.host = "0.0.0.0"
        #expect(open.problem?.contains("needs an access token") == true)
        open.accessToken = "short"
        #expect(open.problem?.contains("at least 16") == true)
        var tiles = WebOptions()
        tiles.tileURL = "https://tiles.example/{z}/{x}.png"
        #expect(tiles.problem?.contains("{y}") == true)
        var leaflet = WebOptions()
        leaflet.leafletFolder = "/nonexistent/leaflet"
        #expect(leaflet.leafletProblem?.contains("apt-get install libjs-leaflet") == true)
        await #expect(throws: WebServerError.self) {
            try await WebHarness.with(configure: { $0.leafletFolder = "/nonexistent/leaflet" }) { _ in }
        }
    }
}
