import AsyncHTTPClient
import Testing
import WebApp

/// HEAD is answered wherever GET is, with GET's head and no body (RFC 9110, 9.3.2).
@Suite struct MethodTests {
    @Test(arguments: ["/", "/album", "/api/state", "/api/config", "/api/events?limit=5", "/assets/map.js"])
    func headIsAnsweredWhereGetIs(path: String) async throws {
        try await WebHarness.with { web in
            let get = try await web.get(path)
            let head = try await web.send(.HEAD, path)
            #expect(get.status == 200 && head.status == 200, "\(path): GET \(get.status), HEAD \(head.status)")
            #expect(head.body.isEmpty)
            #expect(head.headers["Content-Type"] == get.headers["Content-Type"])
        }
    }
}

/// A path that exists, asked with a method it does not answer, gets 405 and the methods it
/// does answer in `Allow` (RFC 9110, 15.5.6); a path that does not exist stays a 404.
@Suite struct WrongMethodTests {
    @Test(arguments: [
        ("PUT", "/api/pins", "POST"),
        ("PATCH", "/api/pins/00000000000000aa", "DELETE, GET, HEAD"),
        ("GET", "/api/pins/00000000000000aa/drag", "POST"),
        ("POST", "/api/state", "GET, HEAD"),
        ("DELETE", "/", "GET, HEAD"),
        ("POST", "/leaflet/images/marker.png", "GET, HEAD"),
        ("GET", "/api/region", "PUT"),
        ("GET", "/api/pins/00000000000000aa/photos/3", "DELETE"),
    ])
    func aWrongMethodIsA405ThatNamesTheRightOnes(method: String, path: String, allow: String) async throws {
        try await WebHarness.with { web in
            let answer = try await web.send(.init(rawValue: method), path, json: method == "GET" || method == "DELETE" ? nil : "{}")
            #expect(answer.status == 405, "\(method) \(path): \(answer.status)")
            #expect(answer.headers["Allow"].first == allow, "\(method) \(path)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("method-not-allowed"))
        }
    }

    @Test func aPathThatDoesNotExistIsStillA404() async throws {
        try await WebHarness.with { web in
            let nowhere = try await web.send(.POST, "/api/nothing-here", json: "{}")
            let deeper = try await web.get("/api/pins/00000000000000aa/nothing")
            #expect(nowhere.status == 404 && deeper.status == 404)
        }
    }
}
