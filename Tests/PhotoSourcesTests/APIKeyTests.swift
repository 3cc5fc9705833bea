import Foundation
import Testing
@testable import PhotoAnswers
@testable import PhotoSources

@Suite struct APIKeyTests {
    @Test func theKeyNeverPrints() throws {
        let key = try FlickrAPIKey("  abcdef0123456789abcdef0123456789\n")
        #expect(key.secret == "abcdef0123456789abcdef0123456789")
        #expect("\(key)" == "•••" && String(reflecting: key) == "FlickrAPIKey(•••)")
        #expect(key.redact("url?api_key=abcdef0123456789abcdef0123456789&x") == "url?api_key=•••&x")
    }

    @Test(arguments: ["", "   \n", "has space", "tab\tin", "naïve"])
    func unusableKeysAreRefused(text: String) {
        #expect(throws: PhotoSourceError.self) { try FlickrAPIKey(text) }
    }

    @Test func theEnvironmentComesFirstThenTheConfigFile() throws {
        let home = NSTemporaryDirectory() + "vt-key-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: home) }
        #expect(try FlickrAPIKey.configured(environment: ["HOME": home]) == nil)
        try FileManager.default.createDirectory(atPath: home + "/.config/virtual-tourist", withIntermediateDirectories: true)
        try "from-file\n".write(toFile: home + "/.config/virtual-tourist/flickr-api-key", atomically: true, encoding: .utf8)
        #expect(try FlickrAPIKey.configured(environment: ["HOME": home])?.secret == "from-file")
        #expect(try FlickrAPIKey.configured(environment: ["HOME": home, "FLICKR_API_KEY": "from-env"])?.secret == "from-env")
        #expect(throws: PhotoSourceError.self) { try FlickrAPIKey.configured(environment: ["HOME": home, "FLICKR_API_KEY": ""]) }
        try FileManager.default.createDirectory(atPath: home + "/xdg/virtual-tourist", withIntermediateDirectories: true)
        try "from-xdg".write(toFile: home + "/xdg/virtual-tourist/flickr-api-key", atomically: true, encoding: .utf8)
        #expect(try FlickrAPIKey.configured(environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/xdg"])?.secret == "from-xdg")
        try "".write(toFile: home + "/.config/virtual-tourist/flickr-api-key", atomically: true, encoding: .utf8)
        do {
            _ = try FlickrAPIKey.configured(environment: ["HOME": home])
            Issue.record("an empty key file was accepted")
        } catch {
            #expect(error.message.contains("flickr-api-key") && error.message.contains("empty"))
        }
    }
}
