import EventLog
import Foundation
import StorageTestSupport
import Testing

/// Bad input gets a clear error and changes nothing on disk.
@Suite struct BadInputTests {
    @Test func aPathThatCannotBeALogIsRefused() throws {
        let directory = TemporaryFolder.made("paths")
        let file = directory.sub("plain-file")
        try writeBytes([1, 2, 3], to: file)
        let error = expectLogError(.notALog) { try EventLog.open(at: file, configuration: configuration()) }
        #expect(error?.message.contains("is a file, not an event log directory") == true)
        expectLogError(.notALog) { try LogReader(directory: file) }
        #expect(try readBytes(file) == [1, 2, 3])

        let other = directory.sub("photos")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try writeBytes(Array("not a log".utf8), to: other + "/notes.txt")
        let before = try snapshot(other)
        let foreign = expectLogError(.notALog) { try EventLog.open(at: other, configuration: configuration()) }
        #expect(foreign?.message.contains("notes.txt") == true)
        expectLogError(.notALog) { try LogReader(directory: other) }
        #expect(try snapshot(other) == before)

        expectLogError(.notALog) { try LogReader(directory: directory.sub("nothing-here")) }
        var noCreate = configuration()
        noCreate.createIfMissing = false
        expectLogError(.notALog) { try EventLog.open(at: directory.sub("nothing-here"), configuration: noCreate) }
        #expect(!FileManager.default.fileExists(atPath: directory.sub("nothing-here")))
    }

    @Test func aSegmentWithTheWrongMagicIsNotALog() throws {
        let directory = TemporaryFolder.made("magic")
        try writeBytes([UInt8](repeating: 0x41, count: 200), to: directory.path + "/00000000000000000001.seg")
        let before = try snapshot(directory.path)
        let error = expectLogError(.notALog) { try EventLog.open(at: directory.path, configuration: configuration()) }
        #expect(error?.message.contains("its first bytes are not VTLOGSEG") == true)
        expectLogError(.notALog) { try readAll(directory.path) }
        #expect(try snapshot(directory.path) == before)
    }

    @Test func aNewerFormatVersionIsNamed() throws {
        let directory = TemporaryFolder.made("version")
        try makeSegmentedLog(directory.path, events: 3)
        let path = directory.path + "/00000000000000000001.seg"
        var bytes = try readBytes(path)
        bytes[8] = 3
        setField(IndependentBytes.crc32c(bytes[0..<60]), in: &bytes, at: 60)
        try writeBytes(bytes, to: path)
        let error = expectLogError(.unsupportedVersion) { try readAll(directory.path) }
        #expect(error?.message.contains("version 3") == true)
    }

    @Test func refusedAppendsChangeNothing() throws {
        let directory = TemporaryFolder.made("refused")
        let clock = TestClock()
        var settings = configuration(clock: clock)
        settings.maxEventSize = 1000
        let log = try EventLog.open(at: directory.path, configuration: settings)
        try log.append(syntheticPayload(1))
        let before = try snapshot(directory.path)

        let tooLarge = expectLogError(.eventTooLarge) { try log.append([UInt8](repeating: 1, count: 1001)) }
        #expect(tooLarge?.message.contains("1001 bytes; the limit is 1000") == true)
        expectLogError(.eventTooLarge) { try log.append(contentsOf: [[1], [UInt8](repeating: 1, count: 1001)]) }

        clock.advance(microseconds: -1)
        let backwards = expectLogError(.clockWentBackwards) { try log.append(syntheticPayload(2)) }
        #expect(backwards?.message.contains("earlier than the log's last event") == true)

        let t = LogTimestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
        expectLogError(.invalidArgument) { try log.append(contentsOf: [[1], [2]], timestamps: [t]) }
        expectLogError(.invalidArgument) { try log.append(contentsOf: [[1], [2]], timestamps: [t.adding(microseconds: 5), t]) }
        expectLogError(.invalidArgument) { try log.append(contentsOf: [[1]], timestamps: [t.adding(microseconds: -1)]) }
        #expect(try log.append(contentsOf: []) == 2..<2)
        try log.sync()
        #expect(try snapshot(directory.path) == before)
        #expect(log.lastSequence == 1)

        // The log still works, and the clock may stand still.
        clock.advance(microseconds: 1)
        #expect(try log.append(syntheticPayload(2)) == 2)
        #expect(try log.append(contentsOf: [[9]], timestamps: [clock.now()]) == 3..<4)
        try log.close()
        expectLogError(.closed) { try log.append([1]) }
        #expect(try readAll(directory.path).map(\.sequence) == [1, 2, 3])
    }

    @Test func invalidConfigurationsAndArgumentsAreRefused() throws {
        let directory = TemporaryFolder.made("config")
        var cases: [(String, LogConfiguration)] = []
        var c = LogConfiguration()
        c.compressionLevel = 99; cases.append(("zstd level", c))
        c = LogConfiguration(); c.segmentSize = 10; cases.append(("segmentSize", c))
        c = LogConfiguration(); c.maxBatchSize = 100 << 20; cases.append(("maxBatchSize", c))
        c = LogConfiguration(); c.maxEventSize = c.maxBatchSize; cases.append(("maxEventSize", c))
        c = LogConfiguration(); c.durability = .interval(.zero); cases.append(("sync interval", c))
        c = LogConfiguration(); c.newLogID = [1, 2, 3]; cases.append(("newLogID", c))
        c = LogConfiguration(); c.indexInterval = 0; cases.append(("indexInterval", c))
        for (name, settings) in cases {
            let error = expectLogError(.invalidArgument) { try EventLog.open(at: directory.path, configuration: settings) }
            #expect(error?.message.contains(name) == true, "\(name): \(String(describing: error))")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        try makeSegmentedLog(directory.sub("log"), events: 2)
        expectLogError(.invalidArgument) { try LogReader(directory: directory.sub("log")).events(from: 0) }
    }
}
