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
