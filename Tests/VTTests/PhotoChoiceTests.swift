import DemoPhotoServer
import Foundation
import PhotoServiceDoubles
import Testing

/// `--photos auto|flickr|commons|demo` (and `VT_PHOTOS`): which service fills the albums, what
/// `auto` does without a key and without a network, and the credits `vt album` shows.
@Suite struct PhotoChoiceTests {
    let vt = CLI()

    func droppedPin(_ store: String) async throws -> String {
        try CLI.object(try await runAside(["pin", "drop", "48.8584", "2.2945", "--json", "--store", store]).output)["pin"] as! String
    }

    /// Runs `vt` on a thread of its own: waiting for it must not hold one of the few threads of
    /// Swift's cooperative pool, which the in-process Commons double (and every other async
    /// test) needs.
    func runAside(_ arguments: [String], _ change: @escaping @Sendable (inout [String: String]) -> Void = { _ in }) async throws
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

    @Test func autoWithoutAKeyOrANetworkUsesTheOfflineServiceAndSaysWhy() async throws {
        let store = vt.home + "/store"
        let pin = try await droppedPin(store)
        let opened = try await runAside(["album", pin, "--json", "--per-page", "3", "--store", store])
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
        let pin = try await droppedPin(store)
        let endpoint = double.endpoint
        let opened = try await runAside(["album", pin, "--json", "--per-page", "4", "--photos", "commons", "--store", store]) {
            $0["VT_COMMONS_ENDPOINT"] = endpoint
            $0["VT_CONTACT"] = "tests@example.org"
        }
        let text = try await runAside(["album", pin, "--store", store]) { _ in }
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
        let pin = try await droppedPin(store)
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

    @Test func vtPhotosChoosesAsTheOptionDoesAndTheOptionWins() async throws {
        let store = vt.home + "/store"
        let pin = try await droppedPin(store)
        let fromVariable = try await runAside(["album", pin, "--per-page", "2", "--store", store]) { $0["VT_PHOTOS"] = "demo" }
        #expect(fromVariable.status == 0, "\(fromVariable.errors)")
        #expect(fromVariable.errors.contains("chosen with --photos demo") && !fromVariable.errors.contains("did not answer"))
        // The option over the variable: VT_PHOTOS says commons (which would fail: nothing
        // listens there), --photos says demo.
        let overridden = try await runAside(["album", "new-collection", pin, "--per-page", "2", "--photos", "demo", "--store", store]) {
            $0["VT_PHOTOS"] = "commons"
        }
        #expect(overridden.status == 0, "\(overridden.errors)")
        #expect(overridden.errors.contains("chosen with --photos demo") && !overridden.output.contains("failed"), "\(overridden.output)")
    }

    @Test func badChoicesAreClearErrorsThatChangeNothing() async throws {
        let store = vt.home + "/store"
        let pin = try await droppedPin(store)
        let before = try await runAside(["log", "--json", "--store", store]).output
        let badOption = try await runAside(["album", pin, "--photos", "picasa", "--store", store])
        #expect(badOption.status == 2 && badOption.errors.contains("picasa"), "\(badOption.errors)")
        let badVariable = try await runAside(["album", pin, "--store", store]) { $0["VT_PHOTOS"] = "picasa" }
        #expect(badVariable.status == 1 && badVariable.errors.contains("VT_PHOTOS must be one of auto, flickr, commons, demo"))
        let noKey = try await runAside(["album", pin, "--photos", "flickr", "--store", store])
        #expect(noKey.status == 1 && noKey.errors.contains("needs a Flickr API key"), "\(noKey.errors)")
        let badEndpoint = try await runAside(["album", pin, "--photos", "commons", "--store", store]) { $0["VT_COMMONS_ENDPOINT"] = "ftp://x/w/api.php" }
        #expect(badEndpoint.status == 1 && badEndpoint.errors.contains("not an http(s) URL"))
        let badContact = try await runAside(["demo", "--photos", "commons"]) { $0["VT_CONTACT"] = "a\u{7}b" }
        #expect(badContact.status == 1 && badContact.errors.contains("VT_CONTACT"), "\(badContact.errors)")
        #expect(try await runAside(["log", "--json", "--store", store]).output == before)
    }
}
