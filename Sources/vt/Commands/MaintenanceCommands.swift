import ArgumentParser
import BlobStore
import EventLog
import Foundation
import VirtualTourist

/// `vt verify [--blobs]`: exit 3 when anything is wrong.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check the whole store; exit 3 if anything is wrong.",
        discussion: "Checks every batch's, block's and record's checksums and the whole hash chain, decodes and replays every event against the rules, compares each snapshot with the replayed state, and checks that every photo an album shows is stored. --blobs also re-hashes every stored photo. Reads only; safe beside a running app.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Also re-hash every stored photo and compare it with its name.") var blobs = false

    struct View: Encodable {
        var clean: Bool
        var events: UInt64
        var format: Int
        var segments: Int
        var batches: Int
        var blocks: Int
        var checkpoints: Int
        /// Events whose payload a forget erased (their digests keep the chain).
        var erased_events: Int
        var head_hash: String?
        var snapshots_checked: Int
        /// Chunks of the proofs' roots files compared with their logs (docs/PROOFS.md).
        var proof_chunks_checked: Int
        var photos_referenced: Int
        var photos_hashed: Int?
        var problems: [String]
        var notes: [String]
    }

    func run() async throws {
        let bar = ProgressBar()
        let report = try StoreAudit.verify(folder: global.storePath, checkPhotoContents: blobs) { bar.update($0, done: $1, total: $2) }
        bar.finish()
        if global.json {
            try Output.json(View(
                clean: report.isClean, events: report.log.events, format: report.log.format.rawValue, segments: report.log.segments,
                batches: report.log.batches, blocks: report.log.blocks, checkpoints: report.log.checkpoints,
                erased_events: report.log.erasedEvents, head_hash: report.log.headHash.map { "\($0)" }, snapshots_checked: report.snapshotsChecked,
                proof_chunks_checked: report.proofChunksChecked, photos_referenced: report.referencedPhotos, photos_hashed: report.blobs?.checked, problems: report.problems,
                notes: report.notes))
        } else {
            if report.log.format == .v2 {
                print("log (format 2): \(report.log.events) events in \(report.log.blocks) sealed block(s) and \(report.log.records) hot-tail record(s)"
                    + " in \(report.log.segments) segment(s); chain rehashed from \(report.log.checkpoints) checkpoint(s); replayed \(report.replayedEvents)")
                if report.log.erasedEvents > 0 {
                    print("forgotten: \(report.log.erasedEvents) event(s) erased by vt forget; the chain verifies across them")
                }
            } else {
                print("log (format 1): \(report.log.events) events in \(report.log.segments) segment(s), \(report.log.batches) batches; replayed \(report.replayedEvents)")
            }
            if let head = report.log.headHash { print("head hash: \(head)") }
            print("snapshots checked against the replay: \(report.snapshotsChecked)")
            if report.proofChunksChecked > 0 { print("proof roots checked against the log: \(report.proofChunksChecked) chunk(s)") }
            print("photos shown in albums: \(report.referencedPhotos)" + (report.blobs.map { "; photo files re-hashed: \($0.checked)" } ?? ""))
            for note in report.notes { print("note: " + note) }
            if report.isClean {
                print(Terminal.styled("ok: no problems found", .green))
            } else {
                print(Terminal.styled("\(report.problems.count) problem(s):", .red))
                for problem in report.problems { print("  " + problem) }
                if report.log.problems.contains(where: \.isDamage) {
                    print("hint: `vt repair` cuts a damaged log back to its last good batch (it says what it cuts first)")
                }
                if report.log.problems.contains(where: { $0.kind == .keySummary }) {
                    print("hint: `vt repair` removes the key summaries that disagree with their blocks; no event is touched")
                }
            }
        }
        if !report.isClean { throw ExitCode(Exit.problemsFound) }
    }
}

/// `vt repair`: explicit, says what it will cut, keeps a copy.
struct RepairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair", abstract: "Cut a damaged log back to its last good batch, after saying what that drops.",
        discussion: "Without --yes it only shows the plan (and asks on a terminal). Every byte cut is copied to log/quarantine/ first. Exit 3 when damage remains.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Carry out the cut without asking.") var yes = false

    func run() async throws {
        let logPath = global.storePath + "/log"
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: logPath, isDirectory: &isFolder), isFolder.boolValue else {
            throw RuntimeError(message: "\(global.storePath) is not a Virtual Tourist store (it has no log/ folder)")
        }
        let plan = try LogRepair.plan(directory: logPath, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
        guard plan.isNeeded else {
            print("the log needs no repair")
            return
        }
        print(plan.description)
        var go = yes
        if !go, isatty(STDIN_FILENO) == 1 {
            let question = plan.damage != nil ? "cut it?" : plan.keySummaries.count == 1 ? "remove it?" : "remove them?"
            FileHandle.standardOutput.write(Data((question + " [y/N] ").utf8))
            go = readLine()?.lowercased().hasPrefix("y") == true
        }
        guard go else {
            let removal = plan.keySummaries.count == 1 ? "remove it" : "remove them"
            print("nothing was changed; run `vt repair --yes` to " + (plan.damage == nil ? removal : "cut"))
            throw ExitCode(Exit.problemsFound)
        }
        let logID = try? LogReader(directory: logPath, payloadCodec: EventCodec.blockCodec).identity()?.logID
        try LogRepair.execute(plan, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
        if plan.damage != nil, let logID {
            // The chunks' roots kept for proofs are of the events cut: the events written after
            // the cut are others (docs/PROOFS.md, "The roots file").
            try? FileManager.default.removeItem(atPath: StoreSync.rootsFile(in: global.storePath, of: logID))
        }
        if !plan.keySummaries.isEmpty {
            let one = plan.keySummaries.count == 1
            print("removed \(plan.keySummaries.count) key summar\(one ? "y" : "ies"); the next open for changes builds \(one ? "it" : "them") again")
        }
        if plan.damage != nil {
            print("repaired: the log now ends at event \(plan.firstDroppedSequence - 1); the cut bytes are in \(logPath)/quarantine/")
        }
    }
}

/// `vt gc [--dry-run] [--grace DURATION] [--retention DURATION]`.
struct GCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc", abstract: "Delete stored photos that no album uses (now or within the retention window).")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "List what would be deleted; delete nothing.") var dryRun = false
    @Option(help: ArgumentHelp("Keep unused photos younger than this (default 10m).", valueName: "DURATION")) var grace: String?
    @Option(help: ArgumentHelp("Keep photos albums showed within this window, for time travel (default 24h).", valueName: "DURATION"))
    var retention: String?

    struct View: Encodable {
        var dry_run: Bool
        var collected: [String]
        var reclaimed_bytes: Int64
        var kept_in_use: Int
        var kept_in_grace: Int
        var scanned: Int
    }

    func validate() throws {
        if let grace { _ = try ArgumentValues.duration(grace) }
        if let retention { _ = try ArgumentValues.duration(retention) }
    }

    func run() async throws {
        let grace = try grace.map(ArgumentValues.duration)
        let retention = try retention.map(ArgumentValues.duration)
        let report = try await global.withStore(retention: retention) { try $0.collectGarbage(grace: grace, dryRun: dryRun) }
        if global.json {
            return try Output.json(View(
                dry_run: dryRun, collected: report.collected.map(\.description), reclaimed_bytes: report.reclaimedBytes,
                kept_in_use: report.keptReferenced, kept_in_grace: report.keptInGrace, scanned: report.scanned))
        }
        print(report.description)
        if dryRun { for digest in report.collected { print("  \(digest)") } }
    }
}

/// `vt snapshot`.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot", abstract: "Write a snapshot of the current state now, so opening replays nothing.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let sequence = try await global.withStore { try await $0.writeSnapshot() }
        if global.json { return try Output.json(["seq": sequence]) }
        print("wrote a snapshot of the state after event \(sequence)")
    }
}

/// `vt compact`: seal the hot tail and compact it into blocks now (format 2).
struct CompactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact", abstract: "Seal the log's hot tail and compact it into sealed blocks now (format 2).",
        discussion: "The store does this by itself in the background as the hot tail grows; this does it at once. Every event and the hash after every event stay as they were; the new blocks are read back and rehashed before the old files go. It then builds the key summaries the log lacks (which pins each block names, so that a pin's history reads only its blocks). A format-1 store has nothing to compact: `vt upgrade` converts it first.")
    @OptionGroup var global: GlobalOptions

    struct View: Encodable {
        var segments: Int
        var blocks: Int
        var events: UInt64
        var bytes_before: Int64
        var bytes_after: Int64
        var block_file: String?
        var key_summaries_built: Int
    }

    func run() async throws {
        let store = try await global.openStore(create: false)
        let report: CompactionReport
        do {
            report = try store.compactLog()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        if global.json {
            return try Output.json(View(
                segments: report.segments, blocks: report.blocks, events: report.events, bytes_before: report.bytesBefore,
                bytes_after: report.bytesAfter, block_file: report.blockFile,
                key_summaries_built: report.keySummariesBuilt))
        }
        print(report.description)
    }
}

/// `vt upgrade`: convert a format-1 store's log to format 2.
struct UpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade", abstract: "Convert the store's log from format 1 to format 2, keeping the old one.",
        discussion: "Verifies the whole format-1 log, writes the format-2 log beside it (log.upgrade/) anchored to the format-1 head hash, reads every event back and compares it with the old one, and only then swaps the folders: the format-1 log stays in log.format1/ until you remove it. A crash at any moment leaves a store that opens (an interrupted swap is finished on the next open). Nothing else may have the store open meanwhile.")
    @OptionGroup var global: GlobalOptions

    struct View: Encodable {
        var events: UInt64
        var format1_head: String?
        var format2_head: String?
        var block_files: Int
        var blocks: Int
        var bytes_before: Int64
        var bytes_after: Int64
        var format1_log: String
        var finished_interrupted: Bool
        var removed_abandoned_upgrade: Bool
    }

    func run() async throws {
        let bar = ProgressBar()
        let report = try await TouristStore.upgrade(at: global.storePath) { done, total in
            bar.update("upgrading", done: Int64(done), total: Int64(total))
        }
        bar.finish()
        if global.json {
            return try Output.json(View(
                events: report.events, format1_head: report.formatOneHead.map { "\($0)" },
                format2_head: report.formatTwoHead.map { "\($0)" }, block_files: report.blockFiles, blocks: report.blocks,
                bytes_before: report.bytesBefore, bytes_after: report.bytesAfter, format1_log: report.formerLog,
                finished_interrupted: report.finishedInterrupted, removed_abandoned_upgrade: report.removedAbandonedWork))
        }
        print(report.description)
        if let head = report.formatOneHead { print("format-1 head hash (anchored in the new log): \(head)") }
        if let head = report.formatTwoHead { print("format-2 head hash: \(head)") }
    }
}
