import Foundation
import StorageTestSupport
import Testing

/// The read-only commands on a seeded store (see ``SeededStore``): text and JSON output.
@Suite(.waitsForProcesses) struct InspectionCommandTests {
    let vt = CLI()

    @Test func logPrintsEveryEventAsTextAndAsJSONLines() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let text = try vt("log", "--store", seeded.folder)
        #expect(text.status == 0, "\(text.errors)")
        let lines = CLI.lines(text.output)
        #expect(lines.count == 12)
        #expect(lines[1] == "     2  2026-11-21T09:00:02.000000Z  PinDropped          pin 11110000 dropped at 48.8584, 2.2945")
        #expect(lines[5].hasSuffix("pin 11110000 collection 1: 3 photos listed (page 1 of 1, 3 in all)  (cause 5)"))

        let json = try vt("log", "--json", "--store", seeded.folder)
        let objects = try CLI.lines(json.output).map(CLI.object)
        #expect(objects.map { $0["seq"] as? Int } == Array(1...12))
        #expect(objects.map { $0["type"] as! String } == [
            "RegionChanged", "PinDropped", "PinDropped", "PinDropped", "AlbumRequested", "PhotosListed", "PhotoDownloaded",
            "PhotoDownloaded", "PhotoDownloadFailed", "PhotoRemoved", "PinDragged", "PinRemoved",
        ])
        #expect(objects[1]["pin"] as? String == "1111000000000001")
        #expect(objects[1]["latitude"] as? Double == 48.8584)
        #expect(objects[6]["cause"] as? Int == 6)
        #expect(objects[0]["time"] as? String == "2026-11-21T09:00:01.000000Z")
    }

    @Test func logFiltersBySequenceTimeTypeAndPin() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        func sequences(_ arguments: String...) throws -> [Int] {
            let run = try vt.run(["log", "--json", "--store", seeded.folder] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.errors)")
            return try CLI.lines(run.output).map { try CLI.object($0)["seq"] as! Int }
        }
        #expect(try sequences("--from", "5", "--to", "7") == [5, 6, 7])
        #expect(try sequences("--type", "PinDropped") == [2, 3, 4])
        #expect(try sequences("--type", "pinremoved", "--type", "PinDragged") == [11, 12])
        #expect(try sequences("--pin", "2222") == [3, 12])  // a removed pin, found by prefix
        #expect(try sequences("--pin", "1111000000000003") == [4, 11])
        #expect(try sequences("--pin", "2222", "--from", "4") == [12])
        #expect(try sequences("--pin", "2222", "--to", "11", "--type", "PinDropped") == [3])
        #expect(try sequences("--since", "2026-11-21T09:00:06Z", "--until", "2026-11-21T09:00:08Z") == [6, 7, 8])
        #expect(try sequences("--since", "2026-11-22") == [])
    }

    @Test func showPrintsTheEventAndItsChainOfCauses() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let text = try vt("show", "8", "--store", seeded.folder)
        #expect(text.status == 0, "\(text.errors)")
        let lines = CLI.lines(text.output)
        #expect(lines[0].contains("PhotoDownloaded") && lines[0].contains("photo 1 downloaded"))
        #expect(lines[1] == "caused by:")
        #expect(lines[2].contains("     6  ") && lines[2].contains("PhotosListed"))
        #expect(lines[3].contains("     5  ") && lines[3].contains("AlbumRequested"))
        let json = try CLI.object(try vt("show", "8", "--json", "--store", seeded.folder).output)
        #expect((json["event"] as! [String: Any])["seq"] as? Int == 8)
        #expect((json["causes"] as! [[String: Any]]).map { $0["seq"] as! Int } == [6, 5])
        let action = try vt("show", "2", "--store", seeded.folder)
        #expect(action.output.contains("no event caused it"))
    }

    @Test func historyTellsOnePinsStoryEvenAfterItWasRemoved() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let removed = try vt("history", "2222", "--json", "--store", seeded.folder)
        #expect(removed.status == 0, "\(removed.errors)")
        #expect(try CLI.lines(removed.output).map { try CLI.object($0)["type"] as! String } == ["PinDropped", "PinRemoved"])
        let album = try vt("history", "1111000000000001", "--store", seeded.folder)
        #expect(CLI.lines(album.output).count == 7)  // dropped, requested, listed, 2 downloads, a failure, a removal
    }

    @Test func statsCountsEventsBytesPhotosAndSnapshots() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let json = try CLI.object(try vt("stats", "--json", "--store", seeded.folder).output)
        #expect(json["events"] as? Int == 12)
        #expect((json["events_by_type"] as! [String: Int])["PinDropped"] == 3)
        #expect((json["events_by_type"] as! [String: Int])["PhotoDownloaded"] == 2)
        #expect(json["pins"] as? Int == 2)
        #expect(json["photos_shown"] as? Int == 2)  // one downloaded, one failed
        #expect(json["blobs"] as? Int == 2)
        #expect(json["referenced_blobs"] as? Int == 1)
        #expect(json["segments"] as? Int == 1)
        #expect((json["log_bytes"] as! Int) > 0 && (json["compression_ratio"] as! Double) > 0)
        #expect(json["snapshots"] as? [Int] == [12])
        let text = try vt("stats", "--store", seeded.folder)
        #expect(text.output.contains("events: 12 (2026-11-21T09:00:01.000000Z … 2026-11-21T09:00:12.000000Z)"))
        #expect(text.output.contains("  PhotoDownloaded     2"))
        #expect(text.output.contains("map: 2 pins, 2 photos in albums"))
    }

    @Test func placeNamesAPlaceWithoutAStore() throws {
        let text = try vt("place", "28.963", "-13.548")
        #expect(text.status == 0 && text.output == "near Arrecife, Spain\n")
        let json = try CLI.object(try vt("place", "--json", "-30", "-120").output)
        #expect(json["text"] as? String == "in the South Pacific Ocean" && json["kind"] as? String == "sea")
        for bad in [["91", "0"], ["0", "nan"], ["1"], ["0", "181"]] {
            let refused = try vt.run(["place"] + bad)
            #expect(refused.status == 2, "\(bad)")
            #expect(refused.output.isEmpty && !refused.errors.isEmpty, "\(bad)")
        }
    }

    @Test func pinsAndRegionShowTheCurrentMap() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let pins = try vt("pins", "--store", seeded.folder)
        #expect(CLI.lines(pins.output) == [
            "1111000000000001  48.8584, 2.2945         near Paris, France            collection 1, complete: 2 photos",
            "1111000000000003  -34, 151                near Bankstown, Australia     collection 1, not requested yet",
        ])
        let json = try CLI.lines(try vt("pins", "--json", "--store", seeded.folder).output).map(CLI.object)
        #expect((json[0]["place"] as? [String: Any])?["text"] as? String == "near Paris, France")
        #expect((json[0]["place"] as? [String: Any])?["country_code"] as? String == "FR")
        let album = json[0]["album"] as! [String: Any]
        #expect(album["status"] as? String == "complete")
        #expect((album["photos"] as! [[String: Any]]).map { $0["id"] as! String } == ["5001", "5003"])
        #expect((album["photos"] as! [[String: Any]]).map { $0["state"] as! String } == ["downloaded", "failed"])
        let region = try vt("region", "--store", seeded.folder)
        #expect(region.output == "map region: centre 48, 2, span 10° × 20°\n")
        let regionJSON = try CLI.object(try vt("region", "--json", "--store", seeded.folder).output)
        #expect((regionJSON["region"] as! [String: Any])["longitude_span"] as? Double == 20)
    }
}
