@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import StorageTestSupport
import Testing

/// Positions in the active segment (``TailPosition``): a head lookup that ends a record there
/// gives the position after it; a read from the next event on, and the check of a tail
/// checkpoint, start from it and find what they find from the segment's start. A position of
/// another segment, or past where a read starts, is not used.
@Suite struct TailPositionTests {
    static func events(_ cursor: LogCursor) throws -> [String] {
        var events: [String] = []
        while let event = try cursor.next() { events.append("\(event.sequence) \(event.timestamp.microsecondsSinceEpoch) \(Array(event.payload))") }
        return events
    }

    @Test func aReadFromALookupsPositionFindsTheEventsAReadFromTheStartFinds() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let appended = try TailCheckpointTests.closedLog(folder, clock: clock)
        let reader = try LogReader(directory: folder.path)
        let last = UInt64(appended.count)
        var positions = 0, withoutPosition = 0
        for sequence in (last - 40)..<last {
            let pending = reader.headInBackground(at: sequence)
            let head = try #require(try pending.value())
            #expect(head == (try reader.head(at: sequence)))
            guard let position = pending.tailPosition() else {
                withoutPosition += 1
                continue
            }
            positions += 1
            #expect(position.sequence == sequence && position.chain == head.hash)
            let fromPosition = try Self.events(try reader.events(from: sequence + 1, through: nil, startingAt: position))
            let fromStart = try Self.events(try reader.events(from: sequence + 1))
            #expect(fromPosition == fromStart && fromStart.count == Int(last - sequence))
        }
        // Commits of one to three events: some heads end a record, some lie inside one.
        #expect(positions >= 10 && withoutPosition >= 10, "\(positions) with a position, \(withoutPosition) without")
    }

    /// A format-1 log's lookup, and a head known already, give none (and a format-1 lookup is
    /// not made a second time to say so).
    @Test func aLookupThatCannotGiveAPositionGivesNone() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = TailCheckpointTests.configuration(clock)
        configuration.writesFormatOne = true
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 30)
        try log.close()
        let reader = try LogReader(directory: folder.path)
        let pending = reader.headInBackground(at: UInt64(appended.count))
        #expect(try pending.value() != nil)
        #expect(pending.tailPosition() == nil)
        #expect(PendingHead.known(try pending.value()).tailPosition() == nil)
    }

    @Test func aPositionOfAnotherSegmentOrPastTheReadsStartIsNotUsed() throws {
        let clock = TestClock()
        let (one, other) = (TemporaryFolder.made(), TemporaryFolder.made())
        let appended = try TailCheckpointTests.closedLog(one, clock: clock)
        _ = try TailCheckpointTests.closedLog(other, clock: TestClock())
        let last = UInt64(appended.count)
        let reader = try LogReader(directory: one.path)
        let sequence = try #require(((last - 20)..<last).first { reader.headInBackground(at: $0).tailPosition() != nil })
        let position = try #require(reader.headInBackground(at: sequence).tailPosition())
        // Past where the read starts.
        let earlier = try Self.events(try reader.events(from: sequence - 5, through: nil, startingAt: position))
        #expect(earlier == (try Self.events(try reader.events(from: sequence - 5))))
        // The same file names in another log (another id, so another chain before the segment).
        let otherReader = try LogReader(directory: other.path)
        let theirs = try Self.events(try otherReader.events(from: sequence + 1, through: nil, startingAt: position))
        #expect(theirs == (try Self.events(try otherReader.events(from: sequence + 1))))
        #expect(!theirs.isEmpty)
    }

    @Test func theCheckOfATailCheckpointFromAPositionCatchesAWrongOneAndPassesARightOne() throws {
        for forges in [false, true] {
            let folder = TemporaryFolder.made()
            let clock = TestClock()
            let appended = try TailCheckpointTests.closedLog(folder, clock: clock)
            let path = try TailCheckpointTests.checkpointPath(folder)
            if forges {
                var forged = try readBytes(path)
                forged[64] ^= 0x01  // the chain
                forged.setLittleEndian(CRC32C.checksum(forged[0..<TailCheckpoint.crcOffset]), at: TailCheckpoint.crcOffset)
                try writeBytes(forged, to: path)
            }
            let last = UInt64(appended.count)
            let log = try EventLog.open(at: folder.path, configuration: TailCheckpointTests.configuration(clock))
            #expect(log.recovery.usedTailCheckpoint)
            let reader = try LogReader(directory: folder.path)
            let position = try #require(((last - 20)..<last).lazy.compactMap { reader.headInBackground(at: $0).tailPosition() }.first)
            log.startTailCheck(from: position)
            if forges {
                let error = #expect(throws: LogError.self) { try log.append([1, 2, 3]) }
                #expect(error.map { "\($0)".contains("tail checkpoint") } == true, "\(String(describing: error))")
                try? log.close()
            } else {
                try log.append([1, 2, 3])
                try log.close()
                #expect(try LogVerifier.verify(directory: folder.path).isClean)
            }
        }
    }
}
