@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// A key summary rewritten with its checksums remade passes a reader's checks and is trusted
/// (FORMAT.md, "Key summaries"); `verify`, given the key function, compares every summary with
/// the keys its blocks' events carry, and `repair` removes one that disagrees, to be built again.
@Suite struct KeySummaryVerifyTests {
    /// The block file's path and header, and its summary, decoded.
    static func summary(in folder: TemporaryFolder) throws -> (path: String, header: BlockFileHeader, summary: KeySummary) {
        let path = try #require(try KeySummaryTests.summaryPaths(folder).first)
        let blockFile = String(path.dropLast(KeySummary.fileExtension.count)) + LogFormat.blockExtension
        let header = try LogDirectory.readBlockFileHeader(blockFile, fileSystem: PosixFileSystem())
        let summary = try #require(KeySummary.decode(try readBytes(path), for: header, function: KeySummaryTests.keys.name))
        return (path, header, summary)
    }

    @Test func verifyFindsASummaryThatLeavesOutOrAddsAKeyAndRepairRemovesIt() throws {
        let folder = TemporaryFolder.made()
        let (log, payloads) = try KeySummaryTests.makeLog(folder)
        let last = UInt64(payloads.count)
        let (path, header, good) = try Self.summary(in: folder)
        let goodBytes = try readBytes(path)
        #expect(try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys).isClean)
        #expect(try LogRepair.plan(directory: folder.path, keys: KeySummaryTests.keys).isNeeded == false)

        // The third block's first key left out: its events with that key are hidden from a question.
        var hiding = good
        let hidden = try #require(hiding.blocks[2].keys.first)
        hiding.blocks[2].keys.removeFirst()
        // A key no event of the first block carries, added: it costs only time, but is not the truth.
        var adding = good
        let absent = try #require((0..<37).first { !adding.blocks[0].keys.contains($0) })
        adding.blocks[0].keys = (adding.blocks[0].keys + [absent]).sorted()

        for (what, forged, says) in [
            ("a key left out", hiding, "it leaves out key \(BlockTailVerifier.KeyMismatch.hex(hidden)), which the block's events carry"),
            ("a key added", adding, "it names key \(BlockTailVerifier.KeyMismatch.hex(absent)), which none of them carries"),
        ] {
            try writeBytes(forged.encoded(for: header), to: path)
            if what == "a key left out" {
                let ranges = try LogReader(directory: folder.path).ranges(
                    mayHoldKeysIn: hidden...hidden, function: KeySummaryTests.keys.name, from: 1, through: last)
                let missed = (hiding.blocks[2].firstSequence..<hiding.blocks[3].firstSequence).filter { sequence in
                    KeySummaryTests.key(payloads[Int(sequence - 1)]) == hidden && !ranges.contains { $0.contains(sequence) }
                }
                #expect(!missed.isEmpty, "the forged summary is trusted by a reader: the harm verify must find")
            }
            let report = try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys)
            #expect(report.problems.count == 1, "\(what): \(report.problems)")
            let problem = try #require(report.problems.first)
            #expect(problem.kind == .keySummary && problem.file == path, "\(what)")
            #expect(problem.message.contains(says), "\(what): \(problem.message)")
            #expect(report.eventsAreIntact && !report.isClean && report.events == last)
            // Without the key function nothing can be compared: the events alone are checked.
            #expect(try LogVerifier.verify(directory: folder.path).isClean, "\(what)")

            let plan = try LogRepair.plan(directory: folder.path, keys: KeySummaryTests.keys)
            #expect(plan.isNeeded && plan.damage == nil && plan.keySummaries == [path], "\(what)")
            #expect(plan.description.contains("no event is dropped"), "\(plan.description)")
            // A running writer holds the log: repair waits for it to close.
            #expect(throws: LogError.self) { try LogRepair.execute(plan, keys: KeySummaryTests.keys) }
            #expect(FileManager.default.fileExists(atPath: path))
        }
        try log.close()
        let segmentsBefore = try LogDirectory.listed(folder.path).map(\.path)
        let plan = try LogRepair.plan(directory: folder.path, keys: KeySummaryTests.keys)
        try LogRepair.execute(plan, keys: KeySummaryTests.keys)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try LogDirectory.listed(folder.path).map(\.path) == segmentsBefore, "no event file touched")
        #expect(try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys).isClean)
        #expect(try KeySummaryBuilding.buildMissing(directory: folder.path, keys: KeySummaryTests.keys, payloadCodec: nil, fileSystem: PosixFileSystem()) == 1)
        #expect(try readBytes(path) == goodBytes, "built again as compaction wrote it")
        #expect(try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys).isClean)
    }

    /// A summary that fails its own checks is not used by readers, so verify has nothing to
    /// compare (the next writer builds it again) and says so in a note, not a problem; an
    /// erase's rewritten summary agrees with the blocks it leaves.
    @Test func unusableSummariesAreNotedNotReportedAndAnErasedLogStillAgrees() throws {
        let folder = TemporaryFolder.made()
        let (log, payloads) = try KeySummaryTests.makeLog(folder)
        let (path, _, _) = try Self.summary(in: folder)
        var damaged = try readBytes(path)
        damaged[damaged.count / 2] ^= 0x04
        #expect(try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys).notes.isEmpty, "intact")
        try writeBytes(damaged, to: path)
        let noted = try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys)
        #expect(noted.isClean)
        #expect(noted.notes.count == 1 && noted.notes[0].hasPrefix(path) && noted.notes[0].contains("fails its checks"), "\(noted.notes)")
        try FileManager.default.removeItem(atPath: path)
        let missing = try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys)
        #expect(missing.isClean && missing.notes.isEmpty, "a missing summary is only not there yet")
        #expect(try log.buildKeySummaries() == 1)

        let erased = (1...UInt64(payloads.count)).filter { KeySummaryTests.key(payloads[Int($0 - 1)]) == 11 }
        try log.erase(Dictionary(uniqueKeysWithValues: erased.map { ($0, [UInt8]()) }))
        let report = try LogVerifier.verify(directory: folder.path, keys: KeySummaryTests.keys)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.erasedEvents > 0)
        try log.close()
    }
}
