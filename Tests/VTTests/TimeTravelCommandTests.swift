import Foundation
import StorageTestSupport
import Testing

/// `vt state`, `diff`, `replay` and `bisect` on the seeded store.
@Suite(.waitsForProcesses) struct TimeTravelCommandTests {
    let vt = CLI()

    @Test func stateAtASequenceOrATimeShowsThePast() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let at4 = try CLI.object(try vt("state", "--at", "4", "--json", "--store", seeded.folder).output)
        #expect(at4["seq"] as? Int == 4)
        #expect((at4["pins"] as! [[String: Any]]).map { $0["id"] as! String } == ["1111000000000001", "2222000000000002", "1111000000000003"])
        let atTime = try CLI.object(try vt("state", "--at-time", "2026-11-21T09:00:03.5Z", "--json", "--store", seeded.folder).output)
        #expect(atTime["seq"] as? Int == 3)
        let now = try vt("state", "--store", seeded.folder)
        #expect(CLI.lines(now.output).first == "state after event 12: 2 pins")
        let empty = try vt("state", "--at", "0", "--store", seeded.folder)
        #expect(CLI.lines(empty.output).first == "state after event 0: 0 pins")
    }

    @Test func diffListsPinsMovesAndPhotos() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let json = try CLI.object(try vt("diff", "4", "12", "--json", "--store", seeded.folder).output)
        #expect((json["pins_removed"] as! [[String: Any]]).map { $0["id"] as! String } == ["2222000000000002"])
        #expect((json["pins_moved"] as! [[String: Any]]).map { $0["to"] as! [Double] } == [[-34, 151]])
        #expect((json["photos_added"] as! [[String: Any]]).map { ($0["photo"] as! [String: Any])["id"] as! String } == ["5001"])
        let text = try vt("diff", "8", "10", "--store", seeded.folder)
        #expect(CLI.lines(text.output) == ["from event 8 to event 10:", "  - photo 5002 (pin 11110000, collection 1, slot 1)"])
        let none = try vt("diff", "12", "12", "--store", seeded.folder)
        #expect(none.output.contains("nothing changed"))
    }

    @Test func replayWithoutAnEventRefusesWhatDependedOnIt() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let json = try CLI.object(try vt("replay", "--skip", "2", "--json", "--store", seeded.folder).output)
        #expect((json["skipped"] as! [[String: Any]]).map { $0["seq"] as! Int } == [2])
        let refused = json["refused"] as! [[String: Any]]
        #expect(refused.map { ($0["event"] as! [String: Any])["seq"] as! Int } == [5, 6, 7, 8, 9, 10])
        #expect((refused[0]["problem"] as! String).contains("there is no pin 1111000000000001"))
        let state = json["state"] as! [String: Any]
        #expect((state["pins"] as! [[String: Any]]).map { $0["id"] as! String } == ["1111000000000003"])

        let harmless = try vt("replay", "--skip", "1", "--to", "4", "--store", seeded.folder)
        #expect(harmless.output.contains("every later event still follows the rules"))
        #expect(harmless.output.contains("map region: not set"))
    }

    @Test func bisectFindsWhereAConditionTurnsTrue() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        for exhaustive in [false, true] {
            func turn(_ arguments: String...) throws -> [String: Any] {
                let run = try vt.run(["bisect", "--json", "--store", seeded.folder] + arguments + (exhaustive ? ["--first"] : []))
                #expect(run.status == 0, "\(arguments): \(run.errors)")
                return try CLI.object(run.output)
            }
            #expect(try turn("--pin", "2222", "--gone", "--from", "3")["seq"] as? Int == 12)
            #expect(try turn("--pins-at-least", "3", "--to", "11")["seq"] as? Int == 4)
            #expect(try turn("--pin", "1111000000000001", "--photos-at-least", "3", "--to", "9")["seq"] as? Int == 6)
            let fewer = try turn("--pin", "1111000000000001", "--photos-below", "3", "--from", "6")
            #expect(fewer["seq"] as? Int == 10)
            #expect((fewer["event"] as! [String: Any])["type"] as? String == "PhotoRemoved")
            #expect(try turn("--pin", "2222", "--gone")["outcome"] as? String == "already-true")
            #expect(try turn("--pins-at-least", "4")["outcome"] as? String == "never-true")
        }
        let text = try vt("bisect", "--pins-at-least", "3", "--to", "11", "--store", seeded.folder)
        #expect(text.output.hasPrefix("at least 3 pins are on the map from event 4 on"))
    }
}
