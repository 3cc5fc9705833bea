import EventLog
import Foundation
import StorageTestSupport
import Testing

/// `Fixtures/log-v1` is a log written by format version 1 and committed: every later version
/// of this code must read it, event for event, and verify its chain to the same head hash.
/// Never regenerate it; a new format version adds a new fixture beside it.
@Suite struct FixtureTests {
    static let eventCount: UInt64 = 400
    static let base: Int64 = 1_700_000_000_000_000
    static let headHash = "600b602eec26b7e842dd1038c068f2dffa8effe92447282009f73138fcbb11e2"

    /// The fixture's events, defined here and not by code that may change.
    static func payload(_ sequence: UInt64) -> [UInt8] {
        Array("fixture event \(sequence): \(String(repeating: "pin photo album ", count: Int(sequence % 13)))".utf8)
    }

    static func timestamp(_ sequence: UInt64) -> LogTimestamp {
        LogTimestamp(microsecondsSinceEpoch: base + Int64(sequence / 3) * 1_500)
    }

    static var fixturePath: String {
        Bundle.module.bundleURL.appendingPathComponent("Fixtures/log-v1").path
    }

    @Test func theVersion1FixtureReadsEventForEvent() throws {
        let events = try readAll(Self.fixturePath)
        #expect(events.count == Int(Self.eventCount))
        for event in events {
            #expect(Array(event.payload) == Self.payload(event.sequence), "event \(event.sequence)")
            #expect(event.timestamp == Self.timestamp(event.sequence), "event \(event.sequence)")
        }
        let report = try LogVerifier.verify(directory: Self.fixturePath)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.segments > 2)
        #expect(report.headHash?.description == Self.headHash)
        let reader = try LogReader(directory: Self.fixturePath)
        #expect(try reader.event(at: 250).map { Array($0.payload) } == Self.payload(250))
    }

    @Test func aWriterContinuesTheVersion1Fixture() throws {
        let directory = TemporaryFolder.made("fixture")
        try copyDirectory(Self.fixturePath, to: directory.sub("log"))
        let log = try EventLog.open(at: directory.sub("log"), configuration: legacyConfiguration(clock: TestClock(1_800_000_000_000_000)))
        #expect(log.recovery.isClean)
        #expect(try log.append(Self.payload(Self.eventCount + 1)) == Self.eventCount + 1)
        try log.close()
        #expect(try LogVerifier.verify(directory: directory.sub("log")).isClean)
    }

    /// Writes the fixture (run once, when the format version was created):
    /// `VT_WRITE_LOG_FIXTURE=/path/to/new/dir swift test --filter writeTheFixture`.
    /// Skipped, and reported as skipped, unless asked for: not a test that passes doing nothing.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["VT_WRITE_LOG_FIXTURE"] != nil, "writes the fixture when asked"))
    func writeTheFixture() throws {
        let path = try #require(ProcessInfo.processInfo.environment["VT_WRITE_LOG_FIXTURE"])
        var settings = LogConfiguration()
        settings.segmentSize = 4096
        settings.indexInterval = 1024
        settings.newLogID = Array("virtual-tourist!".utf8)
        settings.clock = TestClock(Self.base)
        let log = try EventLog.open(at: path, configuration: settings)
        var next: UInt64 = 1
        while next <= Self.eventCount {
            // Singles and batches of up to 9 events, so both raw and zstd batches appear.
            let count = min(Self.eventCount - next + 1, next % 4 == 0 ? next % 9 + 1 : 1)
            let range = next..<next + count
            try log.append(contentsOf: range.map(Self.payload), timestamps: range.map(Self.timestamp))
            next += count
        }
        try log.close()
        print("head hash:", try LogVerifier.verify(directory: path).headHash!)
    }
}
