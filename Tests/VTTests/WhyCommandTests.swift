import Foundation
import StorageTestSupport
import Testing

/// `vt why` on the seeded store (docs/WHY.md): each fact with the events that set it, in text and
/// in JSON, at a point; bad arguments refused with the reason.
@Suite(.heavy) struct WhyCommandTests {
    let vt = CLI()

    @Test func whyNamesTheEventsBehindEachFact() async throws {
        let seeded = try await SeededStore.make(label: "why-command")
        defer { seeded.remove() }
        let store = seeded.folder

        let place = try vt("why", "pin", "1111000000000003", "--store", store)
        #expect(place.status == 0, "\(place.errors)")
        #expect(place.output.hasPrefix("at event 12: pin 1111000000000003 is at -34.0, 151.0\nbecause:\n  event 11 (PinDragged"), "\(place.output)")
        #expect(place.output.contains("  event 4 (PinDropped") && place.output.contains("dropped the pin at -33.8568, 151.2153"))

        let json = try CLI.object(try vt("why", "photo", "1111000000000001", "1", "--json", "--store", store).output)
        #expect(json["question"] as? String == "photo" && json["slot"] as? Int == 1 && json["at"] as? Int == 12)
        #expect((json["fact"] as? String)?.contains("has no photo 1") == true)
        let because = try #require(json["because"] as? [[String: Any]])
        #expect(because.first?["seq"] as? Int == 10 && because.first?["type"] as? String == "PhotoRemoved")

        // At event 8, photo 1 was downloaded: the download, then the listing it rests on.
        let then = try CLI.object(try vt("why", "photo", "1111000000000001", "1", "--at", "8", "--json", "--store", store).output)
        #expect((then["because"] as? [[String: Any]])?.map { $0["seq"] as! Int } == [8, 6])
        let album = try vt("why", "album", "1111000000000001", "--store", store)
        #expect(album.output.contains("shows collection 1: complete") && album.output.contains("event 9 (PhotoDownloadFailed"), "\(album.output)")
        let button = try vt("why", "new-collection", "1111000000000001", "--store", store)
        #expect(button.status == 0 && button.output.contains("New Collection is"), "\(button.output)")
        let removed = try vt("why", "pin", "2222000000000002", "--store", store)
        #expect(removed.output.contains("is not on the map") && removed.output.contains("event 12 (PinRemoved"), "\(removed.output)")
        let region = try vt("why", "region", "--store", store)
        #expect(region.output.contains("the map opens at") && region.output.contains("event 1 (RegionChanged"), "\(region.output)")

        for (arguments, says) in [
            (["why", "weather"], "not \"weather\""),
            (["why", "photo", "1111000000000001"], "a pin and a slot number"),
            (["why", "photo", "1111000000000001", "one"], "whole number"),
            (["why", "region", "1111000000000001"], "takes nothing more"),
            (["why", "pin", "ffff000000000000"], "no pin"),
            (["why", "pin", "1111000000000001", "--at", "99"], "no event 99"),
        ] {
            let refused = try vt(arguments + ["--store", store])
            #expect(refused.status != 0 && refused.errors.contains(says), "\(arguments): \(refused.errors)")
        }
    }
}
