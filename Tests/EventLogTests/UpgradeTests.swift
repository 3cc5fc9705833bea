import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// `LogUpgrade` on real files: the committed format-1 fixture becomes a format-2 log with the
/// same events, anchored to the format-1 head; bad cases change nothing; an interrupted swap
/// is finished, an abandoned one removed.
@Suite struct UpgradeTests {
    /// A copy of the committed format-1 fixture at `<directory>/log`.
    static func fixtureCopy(_ directory: TemporaryFolder) throws -> String {
        let path = directory.sub("log")
        try copyDirectory(FixtureTests.fixturePath, to: path)
        return path
    }

    static func settings(blockSize: Int = 4 << 10) -> LogConfiguration {
        var settings = Format2LogTests.format2(clock: TestClock(1_800_000_000_000_000))
        settings.blockSize = blockSize
        return settings
    }

    @Test func theFormat1FixtureUpgradesEventForEventAnchoredToItsHead() throws {
        let directory = TemporaryFolder.made("upgrade")
        let path = try Self.fixtureCopy(directory)
        let before = try readAll(path)
        let oldFiles = try snapshot(path)
        var progress: [(UInt64, UInt64)] = []
        let report = try LogUpgrade.upgrade(directory: path, configuration: Self.settings()) { progress.append(($0, $1)) }

        #expect(report.events == FixtureTests.eventCount)
        #expect(report.formatOneHead?.description == FixtureTests.headHash)
        #expect(report.blocks > 1, "4 KiB blocks: the fixture's events take several")
        #expect(progress.last.map { $0 == (FixtureTests.eventCount, FixtureTests.eventCount) } == true)
        // Every event, in order, with its time and bytes; the new log is format 2 and verifies.
        #expect(try readAll(path) == before)
        let verified = try LogVerifier.verify(directory: path)
        #expect(verified.isClean, "\(verified.problems)")
        #expect(verified.format == .v2 && verified.lastSequence == FixtureTests.eventCount)
        #expect(verified.headHash == report.formatTwoHead)
        // The old log is kept byte for byte beside it.
        #expect(try snapshot(LogUpgrade.formerPath(of: path)) == oldFiles)
        #expect(!FileManager.default.fileExists(atPath: LogUpgrade.workPath(of: path)))

        // The anchor is the format-1 head: rebuilding the chain from an anchor without it gives
        // another head, so the new chain really is bound to the old one.
        let logID = Array("virtual-tourist!".utf8)
        let head = try #require(report.formatOneHead)
        var anchored = EventChain(head: EventChain.anchor(logID: logID, originSequence: FixtureTests.eventCount, originHash: head))
        var unanchored = EventChain(head: EventChain.anchor(logID: logID))
        for event in before {
            anchored.append(time: event.timestamp, payload: event.payload)
            unanchored.append(time: event.timestamp, payload: event.payload)
        }
        #expect(anchored.head == report.formatTwoHead)
        #expect(unanchored.head != report.formatTwoHead)

        // A writer continues the upgraded log in format 2; the chain goes on from the same head.
        let log = try EventLog.open(at: path, configuration: Self.settings())
        #expect(log.format == .v2)
        #expect(try log.append(Array("after the upgrade".utf8)) == FixtureTests.eventCount + 1)
        try log.compact()
        try log.close()
        let after = try readAll(path)
        #expect(Array(after.dropLast()) == before)
        #expect(try LogVerifier.verify(directory: path).isClean)
        #expect(try LogReader(directory: path).head(at: FixtureTests.eventCount)?.hash == report.formatTwoHead)
    }

    @Test func whatCannotBeUpgradedIsRefusedAndNothingChanges() throws {
        let directory = TemporaryFolder.made("upgrade-refused")
        // Already format 2.
        let two = directory.sub("two")
        let log = try EventLog.open(at: two, configuration: Self.settings())
        try log.append(Array("x".utf8))
        try log.close()
        let twoFiles = try snapshot(two)
        expectLogError(.invalidArgument) { try LogUpgrade.upgrade(directory: two, configuration: Self.settings()) }
        #expect(try snapshot(two) == twoFiles)
        // No log at all.
        expectLogError(.notALog) { try LogUpgrade.upgrade(directory: directory.sub("nothing"), configuration: Self.settings()) }
        #expect(!FileManager.default.fileExists(atPath: directory.sub("nothing")))

        // A damaged format-1 log: a flipped byte in a sealed segment is corruption, named.
        let damaged = try Self.fixtureCopy(directory)
        let segment = try segmentFiles(damaged)[1]
        try flipByte(at: 200, in: segment)
        let damagedFiles = try snapshot(damaged)
        let error = expectLogError(.corrupt) { try LogUpgrade.upgrade(directory: damaged, configuration: Self.settings()) }
        #expect(error?.message.contains("vt verify") == true)
        #expect(try snapshot(damaged) == damagedFiles)
        #expect(!FileManager.default.fileExists(atPath: LogUpgrade.workPath(of: damaged)))
        #expect(!FileManager.default.fileExists(atPath: LogUpgrade.formerPath(of: damaged)))

        // A log.format1 from an earlier upgrade is never overwritten.
        let again = directory.sub("again")
        try copyDirectory(FixtureTests.fixturePath, to: again)
        try FileManager.default.createDirectory(atPath: LogUpgrade.formerPath(of: again), withIntermediateDirectories: false)
        expectLogError(.invalidArgument) { try LogUpgrade.upgrade(directory: again, configuration: Self.settings()) }
        #expect(try LogReader(directory: again).format == .v1)

        // Another writer holds the log.
        let held = try Self.fixtureCopy(TemporaryFolder.made("upgrade-held"))
        let writer = try EventLog.open(at: held, configuration: legacyConfiguration())
        expectLogError(.locked) { try LogUpgrade.upgrade(directory: held, configuration: Self.settings()) }
        try writer.close()
        #expect(try LogReader(directory: held).format == .v1)
    }

    @Test func anUpgradeInterruptedBetweenItsRenamesIsFinishedByTheNextOpen() throws {
        let directory = TemporaryFolder.made("upgrade-interrupted")
        let path = try Self.fixtureCopy(directory)
        let before = try readAll(path)
        _ = try LogUpgrade.upgrade(directory: path, configuration: Self.settings())
        // Put the folders as a crash between the two renames leaves them.
        try FileManager.default.moveItem(atPath: path, toPath: LogUpgrade.workPath(of: path))
        #expect(throws: LogError.self) { try LogReader(directory: path) }

        let log = try EventLog.open(at: path, configuration: Self.settings())
        #expect(log.format == .v2)
        try log.close()
        #expect(try readAll(path) == before)
        #expect(!FileManager.default.fileExists(atPath: LogUpgrade.workPath(of: path)))
        #expect(try LogReader(directory: LogUpgrade.formerPath(of: path)).format == .v1)

        // And `upgrade` itself finishes one, saying so.
        try FileManager.default.moveItem(atPath: path, toPath: LogUpgrade.workPath(of: path))
        let report = try LogUpgrade.upgrade(directory: path, configuration: Self.settings())
        #expect(report.finishedInterrupted && report.events == FixtureTests.eventCount)
        #expect(try readAll(path) == before)
    }

    @Test func aLoneFormat1FolderIsNeverReplacedByAnEmptyLog() throws {
        let directory = TemporaryFolder.made("upgrade-lone")
        let path = try Self.fixtureCopy(directory)
        try FileManager.default.moveItem(atPath: path, toPath: LogUpgrade.formerPath(of: path))
        let error = expectLogError(.notALog) { try EventLog.open(at: path, configuration: Self.settings()) }
        #expect(error?.message.contains("rename it back") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// A crash before the swap leaves the format-1 log whole and the new one unfinished beside
    /// it: opening to write still says to upgrade, and the next upgrade starts afresh.
    @Test func anUpgradeAbandonedBeforeItsSwapIsStartedAgain() throws {
        let directory = TemporaryFolder.made("upgrade-abandoned")
        let path = try Self.fixtureCopy(directory)
        let before = try readAll(path)
        let work = LogUpgrade.workPath(of: path)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        try writeBytes(Array(repeating: 7, count: 100), to: work + "/00000000000000000001.blk.tmp")
        expectLogError(.needsUpgrade) { try EventLog.open(at: path, configuration: configuration()) }
        #expect(FileManager.default.fileExists(atPath: work + "/00000000000000000001.blk.tmp"))
        let report = try LogUpgrade.upgrade(directory: path, configuration: Self.settings())
        #expect(report.removedAbandonedWork && report.events == FixtureTests.eventCount)
        #expect(report.description.hasPrefix("removed an unfinished earlier upgrade; upgraded"))
        #expect(!FileManager.default.fileExists(atPath: work))
        #expect(try LogReader(directory: path).format == .v2)
        #expect(try readAll(path) == before)
    }

    /// The anchor hashes `origin_hash` as stored: a hash beside `origin_sequence` 0 (or none
    /// beside carried-over events) would let two files claim one origin with different bytes.
    @Test func anOriginHashWithoutCarriedOverEventsIsCorruption() throws {
        let directory = TemporaryFolder.made("origin")
        let path = directory.sub("log")
        let log = try EventLog.open(at: path, configuration: Self.settings())
        try log.append(Array("x".utf8))
        try log.close()
        let segment = path + "/00000000000000000001.seg"
        var bytes = try readBytes(segment)
        bytes[96 + 5] = 0x44  // a byte of origin_hash (offset 96), origin_sequence staying 0
        let crc = IndependentBytes.le(IndependentBytes.crc32c(bytes[0..<132]))
        bytes.replaceSubrange(132..<136, with: crc)
        try writeBytes(bytes, to: segment)
        let error = expectLogError(.corrupt) { try readAll(path) }
        #expect(error?.message.contains("origin_hash is not zero while its origin_sequence is 0") == true)
        #expect(error?.offset == 88)
        #expect(try LogVerifier.verify(directory: path).isClean == false)
    }
}
