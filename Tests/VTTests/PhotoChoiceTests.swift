import DemoPhotoServer
import Foundation
import Testing

/// `--photos auto|flickr|commons|demo` (and `VT_PHOTOS`): which service fills the albums, what
/// `auto` does without a key and without a network, and the credits `vt album` shows.
@Suite struct PhotoChoiceTests {
    let vt = CLI()

    func droppedPin(_ store: String, _ latitude: String = "48.8584", _ longitude: String = "2.2945") throws -> String {
        try CLI.object(try vt("pin", "drop", latitude, longitude, "--json", "--store", store).output)["pin"] as! String
    }

    func run(_ arguments: [String], _ change: (inout [String: String]) -> Void) throws -> DemoCommandTests.Run {
        var environment = vt.environment
        change(&environment)
        return try DemoCommandTests().vt(arguments, environment: environment)
    }

    /// `run`, on a thread of its own: waiting for `vt` must not hold one of the few threads
    /// of Swift's cooperative pool, which the in-process Commons double needs to answer it.
    func runAside(_ arguments: [String], _ change: @escaping @Sendable (inout [String: String]) -> Void) async throws
        -> DemoCommandTests.Run
    {
        let base = vt.environment
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var environment = base
                change(&environment)
                continuation.resume(with: Result { try DemoCommandTests().vt(arguments, environment: environment) })
            }
        }
    }

    @Test func autoWithoutAKeyOrANetworkUsesTheOfflineServiceAndSaysWhy() throws {
        let store = vt.home + "/store"
        let pin = try droppedPin(store)
        let opened = try vt("album", pin, "--json", "--per-page", "3", "--store", store)
        #expect(opened.status == 0, "\(opened.errors)")
        #expect(opened.errors.contains("did not answer at start"), "\(opened.errors)")
        #expect(opened.errors.contains("the offline demo photo service"))
        let album = try CLI.object(opened.output)["album"] as! [String: Any]
        #expect(album["status"] as? String == "complete")
        // The demo's photos say they are generated, and link to their page on the service.
        let credit = try #require((album["photos"] as! [[String: Any]]).first?["credit"] as? [String: Any])
        #expect((credit["creator"] as? String)?.contains("generated") == true)
        #expect((credit["page_url"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
    }

    @Test func commonsFillsTheAlbumWithCreditsShownInTextAndJSON() async throws {
        let double = try await CommonsDouble.start()
        let store = vt.home + "/store"
        let pin = try droppedPin(store)
        let endpoint = double.endpoint
        let opened = try await runAside(["album", pin, "--json", "--per-page", "4", "--photos", "commons", "--store", store]) {
            $0["VT_COMMONS_ENDPOINT"] = endpoint
            $0["VT_CONTACT"] = "tests@example.org"
        }
        let text = try run(["album", pin, "--store", store]) { _ in }
        await double.stop()
        #expect(opened.status == 0, "\(opened.errors)")
        #expect(opened.errors.contains("photos: the Commons-compatible service at \(double.endpoint)"), "\(opened.errors)")
        let album = try CLI.object(opened.output)["album"] as! [String: Any]
        let photos = album["photos"] as! [[String: Any]]
        try #require(album["status"] as? String == "complete" && photos.count == 4, "\(opened.output) \(opened.errors)")
        let second = photos[1]["credit"] as! [String: Any]
        #expect(second["creator"] as? String == "Photographer 2 & friends")
        #expect(second["licence"] as? String == "Public domain" && second["licence_url"] == nil)
        #expect(second["page_url"] as? String == double.origin + "/wiki/File:Demo_photo_2.jpg")
        #expect(second["date_taken"] as? String == "2019-05-02 12:00:00")
        #expect(double.controls.records.allSatisfy { $0.userAgent?.contains("tests@example.org") == true })
        // The text form: a credit line under each photo.
        #expect(text.output.contains("by Photographer 2 & friends · Public domain · taken 2019-05-02 12:00:00 · \(double.origin)/wiki/File:Demo_photo_2.jpg"), "\(text.output)")
        #expect(text.output.contains("by Uploader 1 · CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0)"))
    }

    @Test func autoChoosesCommonsWhenItAnswers() async throws {
        let double = try await CommonsDouble.start()
        let store = vt.home + "/store"
        let pin = try droppedPin(store)
        let endpoint = double.endpoint
        let opened = try await runAside(["album", pin, "--json", "--per-page", "2", "--store", store]) {
            $0["VT_COMMONS_ENDPOINT"] = endpoint
        }
        await double.stop()
        #expect(opened.status == 0, "\(opened.errors)")
        #expect(opened.errors.contains("Commons-compatible service") && opened.errors.contains("no FLICKR_API_KEY is set"))
        #expect(double.controls.records.first?.query["meta"] == "siteinfo", "the probe comes first")
        // Without VT_CONTACT the User-Agent carries the project's own contact.
        #expect(double.controls.records.allSatisfy { $0.userAgent?.contains("github.com") == true })
    }

    @Test func vtPhotosChoosesAsTheOptionDoesAndTheOptionWins() throws {
        let store = vt.home + "/store"
        let pin = try droppedPin(store)
        let fromVariable = try run(["album", pin, "--per-page", "2", "--store", store]) { $0["VT_PHOTOS"] = "demo" }
        #expect(fromVariable.status == 0, "\(fromVariable.errors)")
        #expect(fromVariable.errors.contains("chosen with --photos demo") && !fromVariable.errors.contains("did not answer"))
    }

    @Test func badChoicesAreClearErrorsThatChangeNothing() throws {
        let store = vt.home + "/store"
        let pin = try droppedPin(store)
        let before = try vt("log", "--json", "--store", store).output
        let badOption = try vt("album", pin, "--photos", "picasa", "--store", store)
        #expect(badOption.status == 2 && badOption.errors.contains("picasa"), "\(badOption.errors)")
        let badVariable = try run(["album", pin, "--store", store]) { $0["VT_PHOTOS"] = "picasa" }
        #expect(badVariable.status == 1 && badVariable.errors.contains("VT_PHOTOS must be one of auto, flickr, commons, demo"))
        let noKey = try vt("album", pin, "--photos", "flickr", "--store", store)
        #expect(noKey.status == 1 && noKey.errors.contains("needs a Flickr API key"), "\(noKey.errors)")
        let badEndpoint = try run(["album", pin, "--photos", "commons", "--store", store]) { $0["VT_COMMONS_ENDPOINT"] = "ftp://x/w/api.php" }
        #expect(badEndpoint.status == 1 && badEndpoint.errors.contains("not an http(s) URL"))
        let badContact = try run(["demo", "--photos", "commons"]) { $0["VT_CONTACT"] = "a\u{7}b" }
        #expect(badContact.status == 1 && badContact.errors.contains("VT_CONTACT"), "\(badContact.errors)")
        #expect(try vt("log", "--json", "--store", store).output == before)
    }
}
