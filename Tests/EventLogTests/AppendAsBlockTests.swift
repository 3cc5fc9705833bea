@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// A replica taking its original's events as a block file (FORMAT.md, "Taking chained events as
/// a block file"): erased events go in erased, the chain stays the original's after every event,
/// appends go on after them, bad batches change nothing, and a crash after the file was named is
/// recovered by the next open.
@Suite struct AppendAsBlockTests {
    /// An original log of 120 commits, compacted, with events 40, 41 and 200 erased (as a
    /// forgotten place leaves them), and every event of it read back.
    static func erasedOriginal(in folder: TemporaryFolder, clock: TestClock) throws -> (LogIdentity, [LogEvent]) {
        let log = try EventLog.open(at: folder.sub("original"), configuration: Format2LogTests.format2(clock: clock, segmentSize: 4096))
        try Format2LogTests.fill(log, clock: clock, commits: 120)
        try log.erase([40: [3], 41: [], 200: [9, 9]])
        try log.close()
        let reader = try LogReader(directory: folder.sub("original"))
        return (try #require(try reader.identity()), try readAll(folder.sub("original")))
    }

    /// A replica holding the original's first `count` events, built as a restore builds it.
    static func replica(_ path: String, identity: LogIdentity, events: ArraySlice<LogEvent>) throws {
        var builder = try LogBuilder(directory: path, identity: identity)
        for event in events { try builder.add(event) }
        _ = try builder.finish()
    }

    static func appendPlain(_ log: EventLog, _ events: ArraySlice<LogEvent>) throws {
        _ = try log.append(contentsOf: events.map { Array($0.payload) }, timestamps: events.map(\.timestamp))
    }

    @Test func erasedEventsTakenAsABlockKeepTheOriginalsChainAndAppendsGoOn() throws {
        let folder = TemporaryFolder.made()
        let (identity, original) = try Self.erasedOriginal(in: folder, clock: TestClock())
        let originalReader = try LogReader(directory: folder.sub("original"))
        #expect(original.filter(\.isErased).map(\.sequence) == [40, 41, 200])

        let path = folder.sub("replica")
        try Self.replica(path, identity: identity, events: original[..<20])
        var configuration = Format2LogTests.format2(segmentSize: 4096)
        configuration.blockKeys = KeySummaryTests.keys
        let log = try EventLog.open(at: path, configuration: configuration)
        // Events 21…35 as ordinary records (the active segment is not empty), then a batch with
        // two erased events, records again, a batch whose only event is erased, and records.
        try Self.appendPlain(log, original[20..<35])
        #expect(try log.appendAsBlock(Array(original[35..<60])) == 36..<61)
        #expect(log.lastSequence == 60)
        #expect(log.head == (try originalReader.head(at: 60)))
        try Self.appendPlain(log, original[60..<199])
        #expect(try log.appendAsBlock([original[199]]) == 200..<201)
        try Self.appendPlain(log, original[200...])
        #expect(log.head == (try originalReader.head(at: UInt64(original.count))))
        try log.close()

        // What a fresh reader sees: the original's events, the erased ones erased alike, and
        // the original's head after every one of them.
        #expect(try readAll(path) == original)
        let reader = try LogReader(directory: path)
        for sequence in stride(from: UInt64(0), through: UInt64(original.count), by: 7) {
            #expect(try reader.head(at: sequence) == originalReader.head(at: sequence))
        }
        let report = try LogVerifier.verify(directory: path, keys: configuration.blockKeys)
        #expect(report.isClean, "\(report.problems)")
        // Each batch taken has its key summary beside its block file.
        #expect(FileManager.default.fileExists(atPath: KeySummary.path(path, 36)))
        #expect(FileManager.default.fileExists(atPath: KeySummary.path(path, 200)))

        let reopened = try EventLog.open(at: path)
        let next = try reopened.append(Array("after".utf8))
        #expect(next == UInt64(original.count) + 1)
        try reopened.close()
        #expect(try LogVerifier.verify(directory: path).isClean)
    }

    @Test func aBatchThatDoesNotFollowOrGoesBackInTimeChangesNothing() throws {
        let folder = TemporaryFolder.made()
        let (identity, original) = try Self.erasedOriginal(in: folder, clock: TestClock())
        let path = folder.sub("replica")
        try Self.replica(path, identity: identity, events: original[..<30])
        let log = try EventLog.open(at: path, configuration: Format2LogTests.format2(segmentSize: 4096))
        try Self.appendPlain(log, original[30..<35])
        let headBefore = log.head

        let gap = #expect(throws: LogError.self) { try log.appendAsBlock(Array(original[36..<45])) }
        #expect(gap?.code == .invalidArgument)
        let late = original[35..<45].map { event in
            LogEvent(
                sequence: event.sequence, timestamp: LogTimestamp(microsecondsSinceEpoch: 1), payload: event.payload,
                isErased: event.isErased)
        }
        let back = #expect(throws: LogError.self) { try log.appendAsBlock(late) }
        #expect(back?.code == .invalidArgument)
        #expect(log.head == headBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).allSatisfy { !$0.hasSuffix(".tmp") })
        // The log still takes the right batch, and appends after it.
        try log.appendAsBlock(Array(original[35..<45]))
        try Self.appendPlain(log, original[45..<50])
        try log.close()
        #expect(try readAll(path) == Array(original[..<50]))
        #expect(try LogVerifier.verify(directory: path).isClean)
    }

    /// A crash after step 3 leaves the block file named, the empty segment it covers, and no
    /// segment after it: the next open removes the covered one and starts one after the block.
    @Test func aCrashAfterTheFileWasNamedIsRecoveredByTheNextOpen() throws {
        let folder = TemporaryFolder.made()
        let (identity, original) = try Self.erasedOriginal(in: folder, clock: TestClock())
        let path = folder.sub("replica")
        try Self.replica(path, identity: identity, events: original[..<30])
        let log = try EventLog.open(at: path, configuration: Format2LogTests.format2(segmentSize: 4096))
        let active = log.lastSequence + 1
        let headBefore = log.head
        try log.appendAsBlock(Array(original[30..<50]))
        try log.close()

        // Put the directory back as step 4 found it: the covered segment there, none after.
        try FileManager.default.removeItem(atPath: SegmentFiles.segmentPath(path, 51))
        let covered = TailSegmentHeader(
            firstSequence: active, logID: identity.logID, createdAt: LogTimestamp(microsecondsSinceEpoch: 1),
            timeBefore: original[29].timestamp.microsecondsSinceEpoch, chainBefore: headBefore.hash, origin: identity.origin)
        try TailWriter.createSegment(directory: path, header: covered, fileSystem: PosixFileSystem())

        let reopened = try EventLog.open(at: path)
        #expect(reopened.lastSequence == 50)
        try Self.appendPlain(reopened, original[50..<60])
        try reopened.close()
        #expect(!FileManager.default.fileExists(atPath: SegmentFiles.segmentPath(path, active)))
        #expect(try readAll(path) == Array(original[..<60]))
        #expect(try LogVerifier.verify(directory: path).isClean)
    }

    @Test func aFormatOneLogRefuses() throws {
        let folder = TemporaryFolder.made()
        let log = try EventLog.open(at: folder.path, configuration: configuration())
        try log.append(Array("one".utf8))
        let refused = #expect(throws: LogError.self) {
            try log.appendAsBlock([LogEvent(sequence: 2, timestamp: LogTimestamp(microsecondsSinceEpoch: 2), payload: ArraySlice<UInt8>([1]))])
        }
        #expect(refused?.code == .invalidArgument)
        #expect(log.lastSequence == 1)
        try log.close()
    }
}
