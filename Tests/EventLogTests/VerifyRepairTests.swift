import Crypto
import EventLog
import Foundation
import StorageTestSupport
import Testing

@Suite struct VerifyRepairTests {
    @Test func verificationCountsEverythingAndNamesTheHeadHash() throws {
        let directory = TemporaryFolder.made("verify")
        try makeSegmentedLog(directory.path, events: 300)
        let report = try LogVerifier.verify(directory: directory.path)
        let segments = try segmentFiles(directory.path)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.segments == segments.count)
        #expect(report.events == 300)
        #expect(report.batches == 300)
        #expect(report.lastSequence == 300)
        #expect(report.storedBytes == Int64(try segments.reduce(0) { $0 + (try readBytes($1)).count }))
        // The head hash is the SHA-256 of the last batch's bytes on disk.
        let lastSegment = try readBytes(segments.last!)
        let last = try #require(batchLocations(lastSegment).last)
        let expected = Array(SHA256.hash(data: Array(lastSegment[last.offset..<last.offset + last.size])))
        #expect(report.headHash?.bytes == expected)
    }

    @Test func repairSaysWhatItWillCutThenCutsBackToTheLastGoodBatchKeepingACopy() throws {
        let directory = TemporaryFolder.made("repair")
        try makeSegmentedLog(directory.path, events: 300)
        let segments = try segmentFiles(directory.path)
        let middle = try readBytes(segments[1])
        let target = batchLocations(middle)[5]
        try flipByte(at: target.offset + 90, in: segments[1])
        // Opening checks each segment's tail only (its cost must not grow with the log); the
        // damage is in the middle of a sealed segment, so a read finds it.
        expectLogError(.corrupt) { try readAll(directory.path) }

        let plan = try LogRepair.plan(directory: directory.path)
        #expect(plan.isNeeded)
        #expect(plan.segment == segments[1])
        #expect(plan.offset == Int64(target.offset))
        #expect(plan.laterSegments == Array(segments[2...]))
        #expect(plan.firstDroppedSequence == target.firstSequence)
        #expect(plan.lastDroppedSequence == 300)
        let laterBytes = try segments[2...].reduce(0) { $0 + (try readBytes($1)).count }
        #expect(plan.bytes == Int64(middle.count - target.offset + laterBytes))
        #expect(plan.description.contains("dropping events \(target.firstSequence)…300"))

        let damagedTail = Array(try readBytes(segments[1])[target.offset...])
        try LogRepair.execute(plan)
        // Every byte cut is in quarantine/.
        let quarantine = directory.path + "/quarantine"
        let kept = try FileManager.default.contentsOfDirectory(atPath: quarantine).sorted()
        #expect(kept.count == segments.count - 1)
        #expect(try readBytes(quarantine + "/" + (segments[1] as NSString).lastPathComponent + "-\(target.offset).repair") == damagedTail)

        let later = TestClock(1_800_000_000_000_000)
        let log = try EventLog.open(at: directory.path, configuration: legacyConfiguration(clock: later))
        #expect(log.lastSequence == target.firstSequence - 1)
        #expect(try log.append(syntheticPayload(target.firstSequence)) == target.firstSequence)
        try log.close()
        #expect(try LogVerifier.verify(directory: directory.path).isClean)
        #expect(try readAll(directory.path).count == Int(target.firstSequence))
        #expect(try LogRepair.plan(directory: directory.path).isNeeded == false)
    }

    @Test func repairRefusesWhileAWriterHasTheLogOpenOrWhenTheLogChanged() throws {
        let directory = TemporaryFolder.made("repair-refuse")
        try makeSegmentedLog(directory.path, events: 200)
        let segments = try segmentFiles(directory.path)
        try flipByte(at: 200, in: segments[0])
        let plan = try LogRepair.plan(directory: directory.path)
        #expect(plan.isNeeded)

        // A writer cannot open this log, but another holder of the lock (a second repair, or a
        // writer that opened before the damage) blocks repair.
        let lock = try FileLock.acquire(at: directory.path + "/LOCK", holder: "pid=1 test")
        let before = try snapshot(directory.path)
        expectLogError(.locked) { try LogRepair.execute(plan) }
        lock.release()
        #expect(try snapshot(directory.path) == before)

        // A plan made before the log changed is not carried out.
        try flipByte(at: 100, in: segments[0])
        expectLogError(.invalidArgument) { try LogRepair.execute(plan) }
        #expect(try snapshot(directory.path) != before)
    }
}

import FileIO
