import DemoPhotoServer
import Foundation
import StorageTestSupport
import Testing

/// `vt demo`, the README's main job: a session with real downloads from a photo service.
@Suite(.waitsForProcesses) struct AlbumDemoTests {
    let runner = DemoCommandTests()

    /// The environment without any key, so the run is offline whatever the machine has set.
    func offlineEnvironment(home: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["FLICKR_API_KEY"] = nil
        environment["VT_FLICKR_ENDPOINT"] = nil
        environment["XDG_CONFIG_HOME"] = nil
        environment["VT_PHOTOS"] = nil
        environment["VT_COMMONS_ENDPOINT"] = CLI.unreachableCommons
        environment["HOME"] = home
        return environment
    }

    @Test func withoutAKeyTheDemoUsesTheOfflineServiceAndSaysSo() throws {
        let home = TemporaryFolder.uniquePath("home")
        let store = home + "/store"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try runner.vt(["--store", store], environment: offlineEnvironment(home: home))
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("photos: the offline demo photo service at http://127.0.0.1:"))
        #expect(run.output.contains("no FLICKR_API_KEY is set"))
        #expect(run.output.contains("21 placeholders"))
        #expect(run.output.contains("complete: 21 photos"))
        #expect(run.output.contains("No Images"))
        #expect(run.output.contains("then: Paris had 21 photos of collection 1"))
        #expect(run.output.contains("collected 21 images"))
        #expect(run.output.contains("done; the store is kept in \(store)"))
        #expect(FileManager.default.fileExists(atPath: store + "/log"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == ["blobs", "log", "snapshots"])
    }

    @Test func withAKeyTheKeyReachesTheServiceAndNothingElse() async throws {
        let secret = "5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
        let server = try await DemoPhotoServer.start(requiredKey: secret)
        let home = TemporaryFolder.uniquePath("home")
        let store = home + "/store"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        // The service echoes the key in an error, and some images fail.
        server.controls.failNextSearches(with: [.statFail(code: 99, message: "Insufficient permissions for \(secret)")])
        server.controls.failImages { number, _ in number == 3 ? .httpStatus(500) : nil }
        var environment = offlineEnvironment(home: home)
        environment["FLICKR_API_KEY"] = secret
        environment["VT_FLICKR_ENDPOINT"] = server.endpoint
        let run = try runner.vt(["--store", store], environment: environment)
        await server.stop()
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("a Flickr API key is configured"))
        #expect(run.output.contains("the search failed"), "\(run.output)")
        #expect(server.controls.searches.count >= 3)
        #expect(!run.output.contains(secret) && !run.errors.contains(secret))
        let walker = try #require(FileManager.default.enumerator(atPath: store))
        while let name = walker.nextObject() as? String {
            guard let data = FileManager.default.contents(atPath: store + "/" + name) else { continue }
            #expect(data.range(of: Data(secret.utf8)) == nil, "the key is in \(name)")
        }
    }

    @Test func anUnusableKeyIsAClearErrorAndNothingRuns() throws {
        let home = TemporaryFolder.uniquePath("home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = offlineEnvironment(home: home)
        environment["FLICKR_API_KEY"] = "has a space"
        let run = try runner.vt(["--store", home + "/store"], environment: environment)
        #expect(run.status == 1)
        #expect(run.errors.contains("Flickr API key") && !run.errors.contains("has a space"), "\(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: home + "/store"))
    }
}
