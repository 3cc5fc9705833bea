import Foundation
import NIOHTTP1
import StorageTestSupport
import Testing
import VirtualTourist
import WebApp

/// Every invalid value a route can be sent: a clear error with its status and code, and the
/// store's files byte for byte as they were.
@Suite struct BadRequestTests {
    struct Case: CustomStringConvertible, Sendable {
        var method: HTTPMethod
        var path: String
        var json: String?
        var headers: [(String, String)] = []
        var status: Int
        var code: String
        var description: String { "\(method) \(path) \(json ?? "")" }
    }

    /// `PIN` stands for a real pin's id.
    static let cases: [Case] = [
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 91, "longitude": 0}"#, status: 400, code: "invalid-place"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 0, "longitude": -180.5}"#, status: 400, code: "invalid-place"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 1e999, "longitude": 0}"#, status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 1, "longitude": 2, "latitude": 80}"#, status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 1, "longitude": 2, "l\u0061titude": 80}"#, status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 1}"#, status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": "north", "longitude": 0}"#, status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins", json: "not json", status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins", json: "[" + String(repeating: "1,", count: 20_000) + "1]", status: 413, code: "too-large"),
        Case(method: .POST, path: "/api/pins", json: nil, status: 415, code: "unsupported-media-type"),
        Case(method: .POST, path: "/api/pins/xyz/drag", json: #"{"latitude": 1, "longitude": 1}"#, status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins/00000000000000ff/drag", json: #"{"latitude": 1, "longitude": 1}"#, status: 404, code: "unknown-pin"),
        Case(method: .POST, path: "/api/pins/PIN/drag", json: #"{"latitude": -90.1, "longitude": 1}"#, status: 400, code: "invalid-place"),
        Case(method: .DELETE, path: "/api/pins/0123", status: 400, code: "invalid-argument"),
        Case(method: .DELETE, path: "/api/pins/00000000000000ff", status: 404, code: "unknown-pin"),
        Case(method: .DELETE, path: "/api/pins/PIN/photos/abc", status: 400, code: "invalid-argument"),
        Case(method: .DELETE, path: "/api/pins/PIN/photos/-1", status: 400, code: "invalid-argument"),
        Case(method: .DELETE, path: "/api/pins/PIN/photos/999", status: 404, code: "unknown-photo"),
        Case(method: .DELETE, path: "/api/pins/PIN/photos/0?collection=7", status: 409, code: "stale-collection"),
        Case(method: .DELETE, path: "/api/pins/PIN/photos/0?collection=x", status: 400, code: "invalid-argument"),
        Case(method: .POST, path: "/api/pins/PIN/retry", status: 409, code: "wrong-album-state"),
        Case(method: .PUT, path: "/api/region", json: #"{"latitude": 0, "longitude": 0, "latitude_span": 0, "longitude_span": 10}"#, status: 400, code: "invalid-place"),
        Case(method: .PUT, path: "/api/region", json: #"{"latitude": 0, "longitude": 0, "latitude_span": 10, "longitude_span": 400}"#, status: 400, code: "invalid-place"),
        Case(method: .GET, path: "/api/state?at=999", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/state?at=-1", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/pins/PIN?at=1e3", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/pins/zz/news", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/pins/00000000000000ff/news", status: 404, code: "unknown-pin"),
        Case(method: .GET, path: "/api/events?type=PinExploded", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/events?limit=0", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/events?limit=5000", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/events?pin=zz", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/why?fact=weather&pin=PIN", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/why?fact=pin&pin=zz", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/why?fact=photo&pin=PIN", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/why?fact=photo&pin=PIN&slot=-1", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/why?fact=pin&pin=00000000000000ff", status: 404, code: "unknown-pin"),
        Case(method: .GET, path: "/api/why?fact=pin&pin=PIN&at=999", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/diff?from=1", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/api/diff?from=1&to=999", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/photos/abc", status: 400, code: "invalid-argument"),
        Case(method: .GET, path: "/photos/" + String(repeating: "ab", count: 32), status: 404, code: "not-found"),
        Case(method: .GET, path: "/leaflet/..%2F..%2Fetc%2Fpasswd", status: 404, code: "not-found"),
        Case(method: .GET, path: "/assets/map.html", status: 404, code: "not-found"),
        Case(method: .POST, path: "/api/pins", json: #"{"latitude": 1, "longitude": 1}"#, headers: [("Origin", "http://evil.example")], status: 403, code: "cross-origin"),
        Case(method: .DELETE, path: "/api/pins/PIN", headers: [("Sec-Fetch-Site", "cross-site")], status: 403, code: "cross-origin"),
        Case(method: .GET, path: "/api/state", headers: [("Host", "rebound.example:80")], status: 421, code: "wrong-host"),
    ]

    /// Sec-Fetch-Site is set by the browser, never by a page: `cross-site` (or `same-site`)
    /// refuses a change even when the Origin is this server's own, and the own Origin with
    /// `same-origin` is still accepted.
    @Test(arguments: ["cross-site", "same-site", "CROSS-SITE", "Same-Site"]) func aCrossSiteFetchIsRefusedEvenWithTheServersOwnOrigin(_ site: String) async throws {
        try await WebHarness.with { web in
            let sequence = web.store.lastSequence
            let body = #"{"latitude": 2, "longitude": 3}"#
            let refused = try await web.send(.POST, "/api/pins", json: body, headers: [("Origin", web.server.origin), ("Sec-Fetch-Site", site)])
            #expect(refused.status == 403, "\(refused.text)")
            #expect(refused.errorCode == "cross-origin")
            #expect(web.store.lastSequence == sequence)
            let accepted = try await web.send(.POST, "/api/pins", json: body, headers: [("Origin", web.server.origin), ("Sec-Fetch-Site", "same-origin")])
            #expect(accepted.status == 201, "\(accepted.text)")
            #expect(web.store.lastSequence > sequence)
        }
    }

    @Test(arguments: cases) func refusedWithAClearErrorAndNothingChanged(_ bad: Case) async throws {
        try await WebHarness.with { web in
            let pin = try await web.store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
            try await web.eventually("the album") { $0.pins[pin]?.album.status == .complete }
            await web.pipeline.waitUntilIdle()
            let before = try snapshotFiles(web.folder + "/store")
            let sequence = web.store.lastSequence
            let answer = try await web.send(
                bad.method, bad.path.replacingOccurrences(of: "PIN", with: pin.description), json: bad.json, headers: bad.headers)
            #expect(answer.status == bad.status, "\(answer.text)")
            #expect(answer.errorCode == bad.code, "\(answer.text)")
            let message = ((try? answer.json())?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.count > 10, "the message explains: \(message)")
            #expect(web.store.lastSequence == sequence)
            #expect(try snapshotFiles(web.folder + "/store") == before)
        }
    }
}
