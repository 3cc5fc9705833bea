import DeviceLogs
import EventLog
import SeededRandom
import StorageTestSupport
import Testing

@Suite struct MergedOrderTests {
    /// Three logs whose clocks jump by seeded amounts (ties included): the merged order is every
    /// event once, sorted by (time, device, sequence), each log's events in their order, and the
    /// same whatever order the logs are given in.
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func mergesByTimeThenDeviceThenSequence(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let folder = TemporaryFolder.made("merged-\(seed)")
        let ids = (0..<3).map { _ in DeviceID.random() }
        var paths: [String] = []
        for (index, id) in ids.enumerated() {
            let clock = TestClock(1_700_000_000_000_000)
            let log = try EventLog.open(at: folder.sub("log\(index)"), configuration: DeviceLogFixtures.configuration(id: id, clock: clock))
            for event in 0..<Int.random(in: 0...60, using: &random) {
                clock.advance(microseconds: Int64.random(in: 0...3, using: &random))  // 0: a tie with the last
                _ = try log.append(Array("\(index)-\(event)".utf8))
            }
            try log.close()
            paths.append(log.directory)
        }
        func merged(_ order: [Int]) throws -> [(DeviceID, LogEvent)] {
            var merge = try MergedOrder(order.map { (ids[$0], try LogReader(directory: paths[$0]).events()) })
            var out: [(DeviceID, LogEvent)] = []
            while let (log, event) = try merge.next() { out.append((merge.devices[log], event)) }
            return out
        }
        let forward = try merged([0, 1, 2])
        // The expected order, computed apart: every event, sorted by time, the device's hex id
        // and sequence.
        var expected: [(time: Int64, device: String, sequence: UInt64)] = []
        for (index, path) in paths.enumerated() {
            expected += try DeviceLogFixtures.events(path).map { ($0.timestamp.microsecondsSinceEpoch, ids[index].description, $0.sequence) }
        }
        expected.sort { ($0.time, $0.device, $0.sequence) < ($1.time, $1.device, $1.sequence) }
        #expect(forward.map { "\($0.1.timestamp.microsecondsSinceEpoch)/\($0.0)/\($0.1.sequence)" }
            == expected.map { "\($0.time)/\($0.device)/\($0.sequence)" }, "seed \(seed)")
        for other in [[2, 1, 0], [1, 0, 2]] {
            let again = try merged(other)
            #expect(again.map { "\($0.0)/\($0.1.sequence)" } == forward.map { "\($0.0)/\($0.1.sequence)" }, "seed \(seed)")
        }
    }

    @Test func aDeviceListedTwiceIsRefused() throws {
        let folder = TemporaryFolder.made("merged-twice")
        let id = DeviceID.random()
        let log = try EventLog.open(at: folder.sub("log"), configuration: DeviceLogFixtures.configuration(id: id))
        try log.close()
        let reader = try LogReader(directory: log.directory)
        #expect(throws: DeviceError.self) { try MergedOrder([(id, try reader.events()), (id, try reader.events())]) }
    }

    @Test func theHybridClockNeverReadsBeforeWhatItObserved() {
        let base = TestClock(1_000)
        let clock = HybridClock(base: base)
        #expect(clock.now().microsecondsSinceEpoch == 1_000)
        clock.observe(LogTimestamp(microsecondsSinceEpoch: 5_000))
        #expect(clock.now().microsecondsSinceEpoch == 5_001)
        clock.observe(LogTimestamp(microsecondsSinceEpoch: 2_000))  // never lowered
        #expect(clock.now().microsecondsSinceEpoch == 5_001)
        base.set(9_000)
        #expect(clock.now().microsecondsSinceEpoch == 9_000)
        clock.observe(LogTimestamp(microsecondsSinceEpoch: .max))
        #expect(clock.now().microsecondsSinceEpoch == .max)
    }
}
