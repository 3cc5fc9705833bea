import BlobStore
import EventLog
import Foundation
import StorageTestSupport
import Testing

/// `vt verify`, `repair`, `gc`, `snapshot`, `export`/`import` and `log --follow`.
@Suite(.waitsForProcesses) struct MaintenanceCommandTests {
    let vt = CLI()

    func segment(_ store: String) -> String { store + "/log/00000000000000000001.seg" }

    func flipByte(in path: String, at offset: Int) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[offset] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    @Test func verifyPassesACleanStoreAndCatchesAFlippedByte() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let clean = try vt("verify", "--blobs", "--store", seeded.folder)
        #expect(clean.status == 0, "\(clean.output)\(clean.errors)")
        #expect(clean.output.contains("log (format 2): 12 events in 0 sealed block(s) and"))
        #expect(clean.output.contains("in 1 segment(s); chain rehashed from 1 checkpoint(s)"))
        #expect(clean.output.contains("photo files re-hashed: 2"))
        #expect(clean.output.contains("ok: no problems found"))
        #expect(!clean.output.contains("note:"))

        // A tail checkpoint (derived data) that fails its checks: a note, and still exit 0.
        let logFolder = seeded.folder + "/log"
        let head = try #require(
            try FileManager.default.contentsOfDirectory(atPath: logFolder).first { $0.hasSuffix(".head") },
            "a clean close leaves a tail checkpoint")
        try flipByte(in: logFolder + "/" + head, at: 20)
        let noted = try vt("verify", "--store", seeded.folder)
        #expect(noted.status == 0, "\(noted.output)\(noted.errors)")
        #expect(noted.output.contains("note: log: ") && noted.output.contains("\(head): a tail checkpoint that fails its checks"))
        #expect(noted.output.contains("ok: no problems found"))

        let size = try FileManager.default.attributesOfItem(atPath: segment(seeded.folder))[.size] as! Int
        try flipByte(in: segment(seeded.folder), at: size / 2)
        let damaged = try vt("verify", "--json", "--store", seeded.folder)
        #expect(damaged.status == 3)
        let report = try CLI.object(damaged.output)
        #expect(report["clean"] as? Bool == false)
        let problems = report["problems"] as! [String]
        #expect(problems.contains { $0.contains("00000000000000000001.seg") && $0.contains("offset") })
        // Readers name the damage too, and say what to do.
        let log = try vt("log", "--store", seeded.folder)
        #expect(log.status == 1 && log.errors.contains("vt repair"))
    }

    @Test func verifyCatchesAMissingAndADamagedPhoto() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let shown = BlobDigest.of(SeededStore.photoBytes[0]).description
        let kept = BlobDigest.of(SeededStore.photoBytes[1]).description  // removed from its album
        let blobs = seeded.folder + "/blobs/sha256/"
        try flipByte(in: blobs + kept.prefix(2) + "/" + kept.dropFirst(2), at: 3)
        let withoutHashing = try vt("verify", "--store", seeded.folder)
        #expect(withoutHashing.status == 0, "\(withoutHashing.output)")
        let hashing = try vt("verify", "--blobs", "--store", seeded.folder)
        #expect(hashing.status == 3)
        #expect(hashing.output.contains("is damaged: its bytes hash to"))

        try FileManager.default.removeItem(atPath: blobs + shown.prefix(2) + "/" + shown.dropFirst(2))
        let missing = try vt("verify", "--json", "--store", seeded.folder)
        #expect(missing.status == 3)
        #expect((try CLI.object(missing.output)["problems"] as! [String]).contains {
            $0.contains("photo \(shown) is shown in an album but missing")
        })
    }

    @Test func repairSaysWhatItCutsAndCutsOnlyWhenTold() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let logID = try #require(try CLI.object(try vt("head", "--json", "--store", seeded.folder).output)["log"] as? String)
        let size = try FileManager.default.attributesOfItem(atPath: segment(seeded.folder))[.size] as! Int
        try flipByte(in: segment(seeded.folder), at: size / 2)  // mid-log: every reader stops there
        // A roots file kept for proofs (docs/PROOFS.md): of the events the cut removes.
        let roots = seeded.folder + "/proofs/\(logID).roots"
        try FileManager.default.createDirectory(atPath: seeded.folder + "/proofs", withIntermediateDirectories: true)
        try Data("kept roots".utf8).write(to: URL(fileURLWithPath: roots))
        let before = try seeded.files()
        let plan = try vt("repair", "--store", seeded.folder)
        #expect(plan.status == 3, "\(plan.errors)")
        #expect(plan.output.contains("repair would cut") && plan.output.contains("nothing was changed"))
        #expect(try seeded.files() == before)

        let cut = try vt("repair", "--yes", "--store", seeded.folder)
        #expect(cut.status == 0, "\(cut.errors)")
        let kept = try #require(cut.output.split(separator: " ").firstIndex(of: "event").map { Int(cut.output.split(separator: " ")[$0 + 1].prefix { $0.isNumber }) ?? -1 })
        #expect((1..<12).contains(kept), "\(cut.output)")
        #expect(!FileManager.default.fileExists(atPath: roots), "the roots of the events cut are gone with them")
        let quarantine = try FileManager.default.contentsOfDirectory(atPath: seeded.folder + "/log/quarantine")
        #expect(!quarantine.isEmpty)
        let log = try CLI.lines(try vt("log", "--json", "--store", seeded.folder).output).map(CLI.object)
        #expect(log.map { $0["seq"] as! Int } == Array(1...kept))
        #expect(try vt("repair", "--store", seeded.folder).output == "the log needs no repair\n")
        let verify = try vt("verify", "--store", seeded.folder)
        #expect(verify.status == 0, "\(verify.output)")  // sound again
        #expect(verify.output.contains("ok: no problems found"))
    }

    /// A pin summary rewritten to leave pin A out, its checksums remade: `vt history` trusts it
    /// and misses pin A's events, `vt verify` names it, `vt repair` removes it (asking first),
    /// and the history is whole again.
    @Test func verifyFindsAPinSummaryThatHidesAPinAndRepairRemovesIt() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        #expect(try vt("compact", "--store", seeded.folder).status == 0)
        let summary = seeded.folder + "/log/00000000000000000001.keys"
        let history = try vt("history", "1111000000000001", "--json", "--store", seeded.folder).output
        #expect(CLI.lines(history).count > 5)

        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: summary)))
        let count = bytes[88...91].reversed().reduce(0) { $0 << 8 | Int($1) }
        let keys = (0..<count).map { index in bytes[(92 + 8 * index)..<(100 + 8 * index)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let hidden = try #require(keys.firstIndex(of: SeededStore.pinA.rawValue))
        bytes.removeSubrange((92 + 8 * hidden)..<(100 + 8 * hidden))
        bytes[88] -= 1
        bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: CRC32C.checksum(Array(bytes[80..<(bytes.count - 4)])).littleEndian, Array.init))
        try Data(bytes).write(to: URL(fileURLWithPath: summary))
        #expect(try vt("history", "1111000000000001", "--json", "--store", seeded.folder).output != history, "the summary is trusted")

        let verify = try vt("verify", "--store", seeded.folder)
        #expect(verify.status == 3)
        #expect(verify.output.contains("00000000000000000001.keys") && verify.output.contains("leaves out key 1111000000000001"), "\(verify.output)")
        #expect(verify.output.contains("hint: `vt repair` removes the key summaries"))
        let plan = try vt("repair", "--store", seeded.folder)
        #expect(plan.status == 3 && plan.output.contains("no event is dropped") && plan.output.contains("run `vt repair --yes` to remove it"))
        #expect(FileManager.default.fileExists(atPath: summary))
        let repair = try vt("repair", "--yes", "--store", seeded.folder)
        #expect(repair.status == 0 && repair.output.contains("removed 1 key summary"), "\(repair.output)\(repair.errors)")
        #expect(!FileManager.default.fileExists(atPath: summary))
        #expect(try vt("verify", "--store", seeded.folder).status == 0)
        #expect(try vt("history", "1111000000000001", "--json", "--store", seeded.folder).output == history)
    }

    @Test func gcDeletesOnlyPhotosNoAlbumUses() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let unused = BlobDigest.of(SeededStore.photoBytes[1]).description
        let before = try seeded.files()
        let dry = try CLI.object(try vt("gc", "--dry-run", "--grace", "0s", "--retention", "0s", "--json", "--store", seeded.folder).output)
        #expect(dry["collected"] as? [String] == [unused])
        #expect(try seeded.files() == before)
        // Within the retention window time travel still needs it. (The seeded events carry
        // fixed 2026 times, so the window is long enough to hold them on any later day.)
        let kept = try CLI.object(try vt("gc", "--grace", "0s", "--retention", "36500d", "--json", "--store", seeded.folder).output)
        #expect(kept["collected"] as? [String] == [])
        let run = try vt("gc", "--grace", "0s", "--retention", "0s", "--store", seeded.folder)
        #expect(run.output.hasPrefix("collected 1 blob(s)"))
        #expect(!FileManager.default.fileExists(atPath: seeded.folder + "/blobs/sha256/" + unused.prefix(2) + "/" + unused.dropFirst(2)))
        #expect(try vt("verify", "--blobs", "--store", seeded.folder).status == 0)
    }

    @Test func upgradeConvertsAFormat1StoreAndKeepsTheOldLog() async throws {
        let seeded = try await SeededStore.make(label: "upgrade", format: .v1)
        defer { seeded.remove() }
        let logBefore = try vt("log", "--store", seeded.folder)
        let statsBefore = try CLI.object(try vt("stats", "--json", "--store", seeded.folder).output)
        #expect(statsBefore["format"] as? Int == 1)
        // A command that writes refuses the format-1 store and says how to convert it.
        let refused = try vt("pin", "drop", "48.8584", "2.2945", "--store", seeded.folder)
        #expect(refused.status == 1 && refused.errors.contains("vt upgrade --store \(seeded.folder)"), "\(refused.errors)")
        #expect(try vt("log", "--store", seeded.folder).output == logBefore.output, "nothing was written")

        let run = try vt("upgrade", "--store", seeded.folder)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("upgraded 12 events to format 2"))
        #expect(run.output.contains("the format-1 log is kept in \(seeded.folder)/log.format1"))
        #expect(run.output.contains("format-1 head hash (anchored in the new log): "))

        // The same events, a clean verify, and stats that say where the old log is.
        #expect(try vt("log", "--store", seeded.folder).output == logBefore.output)
        let verify = try vt("verify", "--blobs", "--store", seeded.folder)
        #expect(verify.status == 0 && verify.output.contains("log (format 2): 12 events"), "\(verify.output)")
        let stats = try vt("stats", "--store", seeded.folder)
        #expect(stats.output.contains("log.format1/: ") && stats.output.contains("remove it once you no longer need it"))
        let statsAfter = try CLI.object(try vt("stats", "--json", "--store", seeded.folder).output)
        #expect(statsAfter["format"] as? Int == 2)
        #expect(statsAfter["snapshots"] as? [Int] == [12])
        #expect((statsAfter["format1_log_bytes"] as? Int ?? 0) > 0)
        // The store takes new actions.
        #expect(try vt("pin", "drop", "10", "20", "--store", seeded.folder).status == 0)

        // Again: refused, clearly, and nothing changes.
        let again = try vt("upgrade", "--json", "--store", seeded.folder)
        #expect(again.status != 0 && again.errors.contains("log.format1 is still there from an earlier upgrade"), "\(again.errors)")
        #expect(try CLI.object(try vt("stats", "--json", "--store", seeded.folder).output)["events"] as? Int == 13)
    }

    @Test func upgradeTellsWhatItWroteInJSONAndRefusesAFormat2Store() async throws {
        let old = try await SeededStore.make(label: "upgrade-json", format: .v1)
        defer { old.remove() }
        let run = try vt("upgrade", "--json", "--store", old.folder)
        #expect(run.status == 0, "\(run.errors)")
        let report = try CLI.object(run.output)
        #expect(report["events"] as? Int == 12 && report["block_files"] as? Int == 1)
        #expect((report["format1_head"] as? String)?.count == 64 && (report["format2_head"] as? String)?.count == 64)
        #expect(report["format1_log"] as? String == old.folder + "/log.format1")

        let new = try await SeededStore.make(label: "upgrade-v2")
        defer { new.remove() }
        let refused = try vt("upgrade", "--store", new.folder)
        #expect(refused.status != 0 && refused.errors.contains("already a format-2 log"), "\(refused.errors)")
        let missing = try vt("upgrade", "--store", new.folder + "-nothing")
        #expect(missing.status != 0 && missing.errors.contains("not a Virtual Tourist store"), "\(missing.errors)")
    }

    @Test func snapshotWritesTheCurrentState() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        try FileManager.default.removeItem(atPath: seeded.folder + "/snapshots")
        let run = try vt("snapshot", "--store", seeded.folder)
        #expect(run.output == "wrote a snapshot of the state after event 12\n", "\(run.errors)")
        #expect(try CLI.object(try vt("stats", "--json", "--store", seeded.folder).output)["snapshots"] as? [Int] == [12])
    }

    @Test func exportThenImportGivesAnEqualState() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let copy = seeded.folder + "-copy"
        let file = seeded.folder + ".jsonl"
        defer {
            try? FileManager.default.removeItem(atPath: copy)
            try? FileManager.default.removeItem(atPath: file)
        }
        let export = try vt("export", "-o", file, "--store", seeded.folder)
        #expect(export.status == 0, "\(export.errors)")
        #expect(export.errors.contains("exported 12 events and 2 photos"))
        let lines = CLI.lines(try String(contentsOfFile: file, encoding: .utf8))
        #expect(lines.count == 16)  // header, 12 events, 2 photos, end
        #expect(try CLI.object(lines[0])["format"] as? String == "virtual-tourist-export")
        let imported = try vt("import", file, "--store", copy)
        #expect(imported.status == 0, "\(imported.errors)")
        #expect(imported.output.contains("imported 12 events and 2 photos"))
        for command in [["state", "--json"], ["log", "--json"], ["state", "--at", "7", "--json"], ["state", "--at-time", "2026-11-21T09:00:09Z", "--json"]] {
            #expect(try vt.run(command + ["--store", copy]).output == (try vt.run(command + ["--store", seeded.folder]).output), "\(command)")
        }
        #expect(try vt("verify", "--blobs", "--store", copy).status == 0)

        // Import never merges, and a cut-off or doctored file leaves nothing behind.
        let again = try vt("import", file, "--store", copy)
        #expect(again.status == 1 && again.errors.contains("is not empty"))
        let target = seeded.folder + "-bad"
        defer { try? FileManager.default.removeItem(atPath: target) }
        let cutOff = lines.dropLast().joined(separator: "\n")
        let doctored = lines.map { $0.replacingOccurrences(of: "\"seq\":9,", with: "\"seq\":19,") }.joined(separator: "\n")
        for (content, message) in [(cutOff, "cut off after event 12"), (doctored, "event 19 comes where event 9 should")] {
            try content.write(toFile: file, atomically: true, encoding: .utf8)
            let run = try vt("import", file, "--store", target)
            #expect(run.status == 1)
            #expect(run.errors.contains(message), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: target))
        }
    }

    @Test func importRefusesEventsThatBreakTheRules() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let file = seeded.folder + ".jsonl"
        let target = seeded.folder + "-bad"
        defer {
            try? FileManager.default.removeItem(atPath: file)
            try? FileManager.default.removeItem(atPath: target)
        }
        _ = try vt("export", "-o", file, "--without-photos", "--store", seeded.folder)
        // Event 12 removes pin B; make it remove a pin that never existed.
        let text = try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(
            of: "\"pin\":\"2222000000000002\",\"seq\":12", with: "\"pin\":\"9999000000000009\",\"seq\":12")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try vt("import", file, "--store", target)
        #expect(run.status == 1)
        #expect(run.errors.contains("line 13: event 12 (PinRemoved) breaks the rules: there is no pin 9999000000000009"), "\(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func logFollowShowsEventsAsTheyLand() async throws {
        let seeded = try await SeededStore.make()
        defer { seeded.remove() }
        let follower = try LogFollower(vt, ["--from", "11", "--store", seeded.folder])
        // The events already there first: the follower is running before the new one lands.
        _ = try follower.lines(until: 2)
        let dropped = try vt("pin", "drop", "1", "2", "--store", seeded.folder)
        #expect(dropped.status == 0, "\(dropped.errors)")
        let lines = try follower.lines(until: 3)
        _ = follower.stop()
        #expect(lines.map { $0["seq"] as? Int } == [11, 12, 13])
        #expect(lines.last?["type"] as? String == "PinDropped")
    }
}
