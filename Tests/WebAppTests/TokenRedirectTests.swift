import RequestReading
import Testing
import WebApp

/// A link with `?token=` sets the cookie and goes to the same page without the token; it
/// must never take the person, token in hand, to another site (docs/SECURITY.md).
@Suite struct TokenRedirectTests {
    static let token = "correct-horse-battery-staple"

    @Test func aTokenLinkToAnotherSiteGoesToTheMapInstead() async throws {
        try await WebHarness.with(configure: { $0.accessToken = Self.token }) { web in
            for path in ["//evil.example/", "//evil.example/album", "///evil.example/", "/%2F%2Fevil.example/"] {
                let visit = try await web.get(path + "?token=\(Self.token)")
                #expect(visit.status == 303, "\(path)")
                let location = try #require(visit.headers["Location"].first, "\(path)")
                #expect(location.hasPrefix("/") && !location.hasPrefix("//") && !location.contains("\\"), "\(path) → \(location)")
            }
            #expect(try await web.get("//evil.example/?token=\(Self.token)").headers["Location"].first == "/")
            #expect(try await web.get("/album?token=\(Self.token)").headers["Location"].first == "/album")
        }
    }

    @Test(arguments: [
        ("/album", "/album"),
        ("/", "/"),
        ("/time", "/time"),
        ("/a/b-c_d.e~f/%41", "/a/b-c_d.e~f/%41"),
        ("//evil.example/", "/"),
        ("///evil.example", "/"),
        ("/\\evil.example/", "/"),
        ("/\\/evil.example/", "/"),
        ("/\t/evil.example", "/"),
        ("/\n/evil.example", "/"),
        ("/ /evil.example", "/"),
        ("https://evil.example/", "/"),
        ("evil.example", "/"),
        ("", "/"),
        ("/%2F%2Fevil.example", "/%2F%2Fevil.example"),
    ])
    func theRedirectStaysOnThisServer(path: String, expected: String) {
        #expect(HomePath.location(path) == expected)
    }
}
