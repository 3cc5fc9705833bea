import Foundation
import StorageTestSupport
import Testing

/// `vt forget` and every reader after it (docs/CLI.md, "vt forget"): the seeded store's pin A
/// (events 2 and 5–10, two photos) is forgotten; the readers show its events as forgotten and
/// never fail on them, `vt verify` passes, and an export imports with them still forgotten.
@Suite(.waitsForProcesses) struct ForgetCommandTests {
    let vt = CLI()
    let pinA = "1111000000000001"
    let pinB = "2222000000000002"

    @Test func forgettingAPlaceLeavesEveryReaderWorkingAndTheChainVerified() async throws {
        let seeded = try await SeededStore.make(label: "forget")
        defer { seeded.remove() }
        let store = seeded.folder
        let headBefore = try CLI.object(try vt("verify", "--json", "--store", store).output)["head_hash"] as? String

        // Without --yes: it says what it would do, and nothing changes.
        let asked = try vt("forget", pinA, "--store", store)
        #expect(asked.status == 1 && asked.errors.contains("--yes") && asked.errors.contains("48.8584"))
        #expect(CLI.lines(try vt("log", "--store", store).output).count == 12)

        let forgot = try vt("forget", pinA, "--yes", "--json", "--store", store)
        #expect(forgot.status == 0, "\(forgot.errors)")
        let report = try CLI.object(forgot.output)
        #expect(report["seq"] as? Int == 13)
        #expect(report["erased_events"] as? Int == 7)
        #expect(report["photos_deleted"] as? Int == 2)

        let log = try vt("log", "--store", store)
        #expect(log.status == 0)
        let lines = CLI.lines(log.output)
        #expect(lines.count == 13)
        #expect(lines[1].contains("Forgotten") && lines[1].contains("a PinDropped whose payload was erased"))
        #expect(lines[12].contains("PlaceForgotten") && lines[12].contains("7 events about it erased"))
        #expect(!log.output.contains("48.8584") && !log.output.contains("5001"))
        let json = try vt("log", "--json", "--store", store)
        #expect(json.output.contains("\"forgotten_type\":\"PhotosListed\"") && !json.output.contains("http://127.0.0.1:9/"))

        #expect(try vt("show", "6", "--store", store).output.contains("Forgotten"))
        let history = try vt("history", pinA, "--store", store)
        #expect(history.status == 0 && history.output.contains("PlaceForgotten"))
        for sequence in ["2", "6", "10", "13"] {
            let state = try vt("state", "--at", sequence, "--store", store)
            #expect(state.status == 0, "\(state.errors)")
            #expect(!state.output.contains(pinA) && !state.output.contains("48.8584"), "state at \(sequence)")
        }
        #expect(try vt("diff", "1", "13", "--store", store).status == 0)
        // Bisect across the erased events: the pin is never present in any state of the history.
        let bisect = try vt("bisect", "--pin", pinA, "--present", "--json", "--store", store)
        #expect(bisect.status == 0, "\(bisect.errors)")
        #expect(try CLI.object(bisect.output)["outcome"] as? String == "never-true")
        #expect(try vt("replay", "--store", store).status == 0)

        let verify = try vt("verify", "--json", "--store", store)
        #expect(verify.status == 0, "\(verify.output)")
        let verified = try CLI.object(verify.output)
        #expect(verified["erased_events"] as? Int == 7)
        #expect(verified["head_hash"] as? String != headBefore, "one more event, so another head")
        #expect(try vt("verify", "--store", store).output.contains("forgotten: 7 event(s) erased"))

        // A removed pin can be forgotten too; an unknown one is refused.
        #expect(try vt("forget", pinB, "--yes", "--store", store).output.contains("2 events erased"))
        let unknown = try vt("forget", "00000000000000ff", "--yes", "--store", store)
        #expect(unknown.status == 1 && unknown.errors.contains("no pin"))

        // Export and import: the new store shows the same forgotten events, and verifies.
        let export = TemporaryFolder.uniquePath("forget") + ".jsonl"
        let copy = TemporaryFolder.uniquePath("forget-copy")
        defer {
            try? FileManager.default.removeItem(atPath: export)
            try? FileManager.default.removeItem(atPath: copy)
        }
        #expect(try vt("export", "-o", export, "--store", store).status == 0)
        let imported = try vt("import", export, "--store", copy)
        #expect(imported.status == 0, "\(imported.errors)")
        let copied = CLI.lines(try vt("log", "--store", copy).output)
        #expect(copied.count == 14)
        #expect(copied[1].contains("a PinDropped whose payload was erased") && copied[2].contains("a PinDropped whose payload was erased"))
        #expect(try vt("verify", "--store", copy).status == 0)
        #expect(!(try String(contentsOfFile: export, encoding: .utf8)).contains("48.8584"))
    }
}
