import Testing
import WebApp

/// Requests HTTP/1.1 says a server must refuse, and targets that are not paths, are refused
/// with a 400 before any route sees them, and their connection closes (RequestHeadCheck).
@Suite struct RequestHeadTests {
    @Test func aSecondHostNoHostAndTargetsThatAreNotPathsAreRefused() async throws {
        try await WebHarness.with { web in
            let port = web.server.port
            let host = "Host: 127.0.0.1:\(port)\r\n"
            let refused: [(String, String)] = [
                ("GET /api/config HTTP/1.1\r\n\(host)Host: evil.example\r\n\r\n", "bad-host"),
                ("GET /api/config HTTP/1.1\r\nHost: evil.example\r\n\(host)\r\n", "bad-host"),
                ("GET /api/config HTTP/1.1\r\n\r\n", "bad-host"),
                ("GET http://evil.example/api/config HTTP/1.1\r\n\(host)\r\n", "bad-target"),
                ("GET http://127.0.0.1:\(port)/api/config HTTP/1.1\r\n\(host)\r\n", "bad-target"),
                ("OPTIONS * HTTP/1.1\r\n\(host)\r\n", "bad-target"),
                ("POST http://evil.example/api/pins HTTP/1.1\r\n\(host)Content-Type: application/json\r\nContent-Length: 33\r\n\r\n{\"latitude\": 1, \"longitude\": 2}", "bad-target"),
            ]
            for (request, code) in refused {
                let connection = try await RawConnection.open(port: port, sending: request)[0]
                let answer = String(decoding: try #require(await connection.readUntilClosed(), "still open: \(request)"), as: UTF8.self)
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(request) → \(answer.prefix(80))")
                #expect(answer.contains(#""code":"\#(code)""#), "\(request) → \(answer)")
            }
            #expect(web.store.state.pins.isEmpty)
            // The same server answers a request as it should be.
            let good = try await RawConnection.open(port: port, sending: "GET /api/config HTTP/1.1\r\n\(host)Connection: close\r\n\r\n")[0]
            let answer = String(decoding: try #require(await good.readUntilClosed()), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(80))")
        }
    }
}
