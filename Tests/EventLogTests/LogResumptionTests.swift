@testable import EventLog
import Foundation
import StorageTestSupport
import Testing

/// ``LogResumption``: the one way an owner with checkpoints of its own (a store's snapshots)
/// opens the log. Whatever checkpoint it names, the heads it gives are the log's heads, the
/// events after a checkpoint are the log's events, and appends go on after `replayed()`.
@Suite(.heavy) struct LogResumptionTests {
    static func resumeAndCheck(_ folder: TemporaryFolder, clock: TestClock, checkpoint: UInt64?, appended: Int) throws {
        let plain = try LogReader(directory: folder.path)
        let resumption = try EventLog.resume(
            at: folder.path, newestCheckpoint: checkpoint, configuration: TailCheckpointTests.configuration(clock))
        let log = resumption.log
        #expect(log.lastSequence == UInt64(appended))
        for sequence in Set([checkpoint ?? 0, 1, UInt64(appended) / 2, UInt64(appended) - 1, UInt64(appended)]) where sequence > 0 {
            #expect(try resumption.head(at: sequence).value() == (try plain.head(at: sequence)), "head at \(sequence)")
            let resumed = try TailPositionTests.events(try resumption.events(after: sequence))
            let read = try TailPositionTests.events(try plain.events(from: sequence + 1))
            #expect(resumed == read && resumed.count == appended - Int(sequence), "after \(sequence)")
        }
        resumption.replayed()
        clock.advance(microseconds: 10)
        #expect(try log.append([1, 2, 3]) == UInt64(appended) + 1)
        try log.close()
    }

    /// After a clean close the newest checkpoint lies at the log's end (its head known), or
    /// anywhere else; with none, the log is read from its first event.
    @Test(arguments: [nil, 1, 350, 0] as [UInt64?])
    func everyCheckpointGetsTheLogsHeadsAndEvents(_ checkpoint: UInt64?) throws {
        let folder = TemporaryFolder.made("resume")
        let clock = TestClock()
        let appended = try TailCheckpointTests.closedLog(folder, clock: clock)
        // 0 stands for the log's last event, where a clean close takes its snapshot.
        try Self.resumeAndCheck(folder, clock: clock, checkpoint: checkpoint == 0 ? UInt64(appended.count) : checkpoint, appended: appended.count)
    }

    /// A checkpoint inside the active segment, neither its end nor the last writer's start (as
    /// after a crash): its head is looked up from open on, and the events after it are read
    /// from where that lookup's scan stopped.
    @Test func aCheckpointInsideTheActiveSegment() throws {
        let folder = TemporaryFolder.made("resume-crash")
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: TailCheckpointTests.configuration(clock))
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 700)
        let reader = try LogReader(directory: folder.path)
        let lastSequence = UInt64(appended.count)
        let inActive = try #require(((lastSequence - 20)..<lastSequence).first { reader.headInBackground(at: $0).tailPosition() != nil })
        try log.close()
        try Self.resumeAndCheck(folder, clock: clock, checkpoint: inActive, appended: appended.count)
    }
}
