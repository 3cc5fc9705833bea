import Foundation
import StorageTestSupport
import Testing

/// The app's actions from the command line, and arguments that must be refused.
@Suite(.waitsForProcesses) struct ActionCommandTests {
    let vt = CLI()

    @Test func pinActionsAndTheRegionChangeTheStore() throws {
        let store = TemporaryFolder.uniquePath("actions")
        defer { try? FileManager.default.removeItem(atPath: store) }
        let dropped = try vt("pin", "drop", "48.8584", "2.2945", "--json", "--store", store)
        #expect(dropped.status == 0, "\(dropped.errors)")
        let paris = try #require(try CLI.object(dropped.output)["pin"] as? String)
        #expect(paris.count == 16)
        let sydney = try vt("pin", "drop", "-33.8568", "151.2153", "--store", store)
        #expect(sydney.output.hasPrefix("dropped pin ") && sydney.output.hasSuffix(" at -33.8568, 151.2153 (event 2)\n"))

        let dragged = try vt("pin", "drag", String(paris.prefix(6)), "-1.5", "-2.25", "--store", store)
        #expect(dragged.status == 0, "\(dragged.errors)")
        #expect(dragged.output == "moved pin \(paris) to -1.5, -2.25 (event 3)\n")
        let region = try vt("region", "set", "10", "-20", "30", "40", "--store", store)
        #expect(region.output == "map region set: centre 10, -20, span 30° × 40° (event 4)\n")
        let removed = try vt("pin", "remove", paris, "--json", "--store", store)
        #expect(try CLI.object(removed.output)["seq"] as? Int == 5)

        let pins = try CLI.lines(try vt("pins", "--json", "--store", store).output).map(CLI.object)
        #expect(pins.count == 1 && pins[0]["latitude"] as? Double == -33.8568)
        let types = try CLI.lines(try vt("log", "--json", "--store", store).output).map { try CLI.object($0)["type"] as! String }
        #expect(types == ["PinDropped", "PinDropped", "PinDragged", "RegionChanged", "PinRemoved"])
    }

    @Test func anAlbumFillsFromTheOfflineServiceAndItsPhotosCanBeRemovedAndReplaced() throws {
        let store = TemporaryFolder.uniquePath("album")
        defer { try? FileManager.default.removeItem(atPath: store) }
        let pin = try CLI.object(try vt("pin", "drop", "48.8584", "2.2945", "--json", "--store", store).output)["pin"] as! String

        let opened = try vt("album", pin, "--json", "--per-page", "5", "--store", store)
        #expect(opened.status == 0, "\(opened.errors)")
        #expect(opened.errors.contains("the offline demo photo service"))
        let album = try CLI.object(opened.output)["album"] as! [String: Any]
        #expect(album["status"] as? String == "complete")
        #expect(album["downloaded"] as? Int == 5)
        let photos = album["photos"] as! [[String: Any]]
        let second = photos[1]["id"] as! String

        let again = try vt("album", String(pin.prefix(4)), "--store", store)
        #expect(again.errors.isEmpty)  // complete: shown without starting a photo service
        #expect(again.output.contains("complete: 5 photos; New Collection is available"))
        #expect(again.output.contains(second))

        let removed = try vt("photo", "remove", pin, String(second.prefix(7)), "--store", store)
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(removed.output.hasPrefix("removed photo \(second) (slot 1)"))
        let after = try CLI.object(try vt("album", pin, "--json", "--store", store).output)["album"] as! [String: Any]
        #expect((after["photos"] as! [[String: Any]]).map { $0["id"] as! String } == photos.map { $0["id"] as! String }.filter { $0 != second })

        let replaced = try vt("album", "new-collection", pin, "--json", "--per-page", "5", "--store", store)
        #expect(replaced.status == 0, "\(replaced.errors)")
        let fresh = try CLI.object(replaced.output)["album"] as! [String: Any]
        #expect(fresh["collection"] as? Int == 2)
        #expect(fresh["status"] as? String == "complete")
        #expect(fresh["page"] as? Int != 1)
    }

    @Test func noWaitRequestsTheAlbumAndReturnsAtOnce() throws {
        let store = TemporaryFolder.uniquePath("nowait")
        defer { try? FileManager.default.removeItem(atPath: store) }
        let pin = try CLI.object(try vt("pin", "drop", "35.0116", "135.7681", "--json", "--store", store).output)["pin"] as! String
        let run = try vt("album", pin, "--no-wait", "--json", "--store", store)
        #expect(run.status == 0, "\(run.errors)")
        #expect((try CLI.object(run.output)["album"] as! [String: Any])["status"] as? String == "listing")
        // The next open resumes the search the log says is pending.
        let resumed = try vt("album", pin, "--json", "--store", store)
        #expect((try CLI.object(resumed.output)["album"] as! [String: Any])["status"] as? String == "complete")
    }

    @Test func badArgumentsAreRefusedClearlyAndAppendNothing() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let before = try seeded.files()
        let cases: [([String], Int32, String)] = [
            (["pin", "drop", "91", "0"], 2, "latitude 91.0 is outside -90…90"),
            (["pin", "drop", "NaN", "0"], 2, "is not a number"),
            (["pin", "drop", "0x10", "0"], 2, "\"0x10\" is not a number in decimal"),
            (["pin", "drop", "1", "inf"], 2, "\"inf\" is not a number in decimal"),
            (["pin", "drop", "1.2.3", "0"], 2, "is not a number in decimal"),
            (["state", "--at", "-1"], 2, "'-1' is invalid for '--at"),
            (["pin", "drop", "12"], 2, "expected 2 numbers"),
            (["pin", "drop", "1", "2", "3"], 2, "expected 2 numbers"),
            (["pin", "drag", "1111000000000001", "0", "181"], 2, "longitude 181.0 is outside"),
            (["pin", "drag", "1111", "0", "0"], 1, "1111 is ambiguous: 2 pins match"),
            (["pin", "remove", "abcd"], 1, "no pin id starts with abcd"),
            (["pin", "remove", "111"], 1, "too short"),
            (["pin", "remove", "zz-top"], 1, "is not a pin id"),
            (["pin", "remove", "2222000000000002"], 1, "no pin id starts with 2222000000000002"),
            (["photo", "remove", "1111000000000001", "9999"], 1, "no photo of this album"),
            (["album", "new-collection", "1111000000000003"], 1, "New Collection is available once it is complete"),
            (["region", "set", "0", "0", "0", "10"], 2, "latitude span 0.0 is outside"),
            (["show", "99"], 1, "there is no event 99; the log holds 1…12"),
            (["show", "0"], 1, "there is no event 0"),
            (["state", "--at", "13"], 1, "the log ends at sequence 12"),
            (["state", "--at", "1", "--at-time", "2h"], 2, "not both"),
            (["state", "--at-time", "yesterday"], 2, "is not a time"),
            (["diff", "0", "40"], 1, "the log ends at sequence 12"),
            (["log", "--from", "40"], 1, "--from 40 is past the end"),
            (["log", "--type", "PinDropt"], 2, "is not an event type"),
            (["log", "--from", "5", "--to", "2"], 2, "is before --from"),
            (["replay", "--skip", "13"], 1, "cannot be skipped"),
            (["bisect", "--pins-below", "1", "--gone"], 2, "exactly one condition"),
            (["bisect", "--gone"], 2, "add --pin"),
            (["gc", "--grace", "soon"], 2, "is not a duration"),
            (["album", "1111000000000001", "--per-page", "0"], 2, "--per-page must be 1 to 250"),
            (["pin", "frobnicate"], 2, "Unknown option"),
            (["pins", "--colour"], 2, "Unknown option"),
        ]
        for (arguments, status, message) in cases {
            let run = try vt.run(arguments + ["--store", seeded.folder])
            #expect(run.status == status, "\(arguments): exit \(run.status), \(run.errors)")
            #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
            #expect(run.output.isEmpty, "\(arguments): \(run.output)")
        }
        #expect(try seeded.files() == before)
    }

    @Test func aFolderThatIsNotAStoreIsNamedAndLeftAlone() throws {
        let folder = TemporaryFolder.uniquePath("notastore")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let read = try vt("pins", "--store", folder)
        #expect(read.status == 1)
        #expect(read.errors.contains("\(folder) is not a Virtual Tourist store"))
        #expect(read.errors.contains("vt pin drop LAT LON"))
        let write = try vt("pin", "drop", "1", "2", "--store", folder)
        #expect(write.status == 1)
        #expect(write.errors.contains("holds other things (notes.txt)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["notes.txt"])
        let missing = try vt("log", "--store", folder + "/nothing-here")
        #expect(missing.status == 1 && missing.errors.contains("there is nothing at"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/nothing-here"))
    }

    @Test func helpDescribesEveryCommand() throws {
        let root = try vt("--help")
        #expect(root.status == 0)
        for command in ["pin", "pins", "album", "photo", "region", "log", "show", "history", "stats", "state", "diff", "replay",
            "bisect", "verify", "repair", "gc", "snapshot", "export", "import", "demo"]
        {
            #expect(root.output.contains("  \(command) "), "\(command) missing from vt --help")
        }
        #expect(root.output.contains("Exit codes: 0 ok, 1 error, 2 usage"))
        let log = try vt("log", "--help")
        #expect(log.status == 0 && log.output.contains("--follow") && log.output.contains("--since <TIME>"))
        let bisect = try vt("bisect", "--help")
        #expect(bisect.output.contains("--photos-below") && bisect.output.contains("git bisect"))
        let drop = try vt("pin", "drop", "--help")
        #expect(drop.output.contains("Negative numbers need") && drop.output.contains("<LAT LON>"))
    }
}
