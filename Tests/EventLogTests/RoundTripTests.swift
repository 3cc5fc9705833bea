import DemoLog
import EventLog
import Foundation
import StorageTestSupport
import Testing

@Suite(.heavy) struct RoundTripTests {
    /// Appends `count` synthetic events in appends of up to `perAppend`, with the clock moving a
    /// little between appends, and returns the clock readings of each event.
    @discardableResult
    func fill(_ log: EventLog, clock: TestClock, from first: UInt64 = 1, count: Int, perAppend: Int)
        throws -> [Int64]
    {
        var times: [Int64] = []
        var next = first
        let end = first + UInt64(count)
        while next < end {
            let size = min(UInt64(perAppend), end - next)
            let range = try log.append(contentsOf: (next..<next + size).map(syntheticPayload))
            #expect(range == next..<next + size)
            times += Array(repeating: clock.now().microsecondsSinceEpoch, count: Int(size))
            clock.advance(microseconds: Int64(next % 7))
            next += size
        }
        return times
    }

    /// Checks that the log holds exactly events 1...count with their payloads and times.
    func expectExactly(_ path: String, count: Int, times: [Int64]? = nil) throws {
        let events = try readAll(path)
        #expect(events.count == count)
        #expect(events.map(\.sequence) == Array(1...UInt64(max(count, 1))).prefix(count).map { $0 })
        #expect(events.allSatisfy { SyntheticEvents.isPayload($0.payload, of: $0.sequence) })
        if let times { #expect(events.map(\.timestamp.microsecondsSinceEpoch) == times) }
        #expect(try LogReader(directory: path).lastSequence() == UInt64(count))
        let report = try LogVerifier.verify(directory: path)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.events == UInt64(count))
    }

    @Test(arguments: [0, 1, 255, 256, 257, 100_000])
    func roundTripsAndContinuesAfterReopening(_ count: Int) throws {
        let directory = TemporaryFolder.made()
        let clock = TestClock()
        var times: [Int64] = []
        do {
            let log = try EventLog.open(
                at: directory.path, configuration: configuration(clock: clock, durability: .none, segmentSize: 1 << 20))
            times = try fill(log, clock: clock, count: count, perAppend: 256)
            #expect(log.lastSequence == UInt64(count))
            try log.close()
        }
        try expectExactly(directory.path, count: count, times: times)

        // Reopening continues the same sequence and the same chain.
        let log = try EventLog.open(at: directory.path, configuration: configuration(clock: clock, durability: .none))
        #expect(log.recovery.isClean)
        #expect(log.lastSequence == UInt64(count))
        times += try fill(log, clock: clock, from: UInt64(count) + 1, count: 3, perAppend: 1)
        try log.close()
        try expectExactly(directory.path, count: count + 3, times: times)
    }

    @Test func anAppendExactlyAtTheBatchLimitFitsAndOneByteMoreIsRefused() throws {
        let directory = TemporaryFolder.made()
        var settings = configuration()
        settings.maxBatchSize = 1_200
        settings.maxEventSize = 1_000
        let log = try EventLog.open(at: directory.path, configuration: settings)
        // Each event counts its bytes plus 20 bytes of framing allowance.
        let fits = [[UInt8]](repeating: [UInt8](repeating: 7, count: 100), count: 10)  // 10 × 120 = 1,200
        #expect(try log.append(contentsOf: fits) == 1..<11)
        let before = try snapshot(directory.path)
        let over = fits.dropLast() + [[UInt8](repeating: 7, count: 101)]
        expectLogError(.batchTooLarge) { try log.append(contentsOf: Array(over)) }
        #expect(try snapshot(directory.path) == before)
        #expect(try log.append(contentsOf: fits) == 11..<21)
        try log.close()
        #expect(try readAll(directory.path).count == 20)
        #expect(try LogVerifier.verify(directory: directory.path).records == 2)
    }

    @Test func segmentsRollAtTheirSizeAndReadingCrossesThem() throws {
        let directory = TemporaryFolder.made()
        let clock = TestClock()
        // Format 1's segments and indexes (format 2's rolls: Format2LogTests).
        let log = try EventLog.open(
            at: directory.path, configuration: legacyConfiguration(clock: clock, segmentSize: 4096, indexInterval: 512))
        // Append one event at a time until the first roll, then exactly one more.
        var next: UInt64 = 1
        while try segmentFiles(directory.path).count < 2 {
            try log.append(syntheticPayload(next))
            next += 1
        }
        let firstOfSecond = next - 1
        #expect(try segmentFiles(directory.path).map { ($0 as NSString).lastPathComponent }
            == ["00000000000000000001.seg", String(format: "%020llu.seg", firstOfSecond)])
        // The sealed segment carries no preallocated tail: it ends at its last batch.
        let sealed = try readBytes(try segmentFiles(directory.path)[0])
        #expect(sealed.count >= 4096 && sealed.count < 4096 + 200)
        try fill(log, clock: clock, from: next, count: 200, perAppend: 3)
        try log.close()
        let segments = try segmentFiles(directory.path)
        #expect(segments.count > 4)
        try expectExactly(directory.path, count: Int(next) + 199)

        // Random access and seeking land on the right event in any segment, with or without
        // the help of the index.
        let reader = try LogReader(directory: directory.path)
        for sequence in [1, firstOfSecond - 1, firstOfSecond, firstOfSecond + 1, next + 150, next + 199] as [UInt64] {
            let event = try reader.event(at: sequence)
            #expect(event?.sequence == sequence)
            #expect(event.map { SyntheticEvents.isPayload($0.payload, of: sequence) } == true)
            let cursor = try reader.events(from: sequence, through: sequence + 2)
            var seen: [UInt64] = []
            while let event = try cursor.next() { seen.append(event.sequence) }
            #expect(seen == Array(sequence...min(sequence + 2, next + 199)))
        }
        #expect(try reader.event(at: next + 200) == nil)
    }

    @Test func seekingByTimeFindsTheFirstEventAtOrAfterIt() throws {
        let directory = TemporaryFolder.made()
        let clock = TestClock(1_000_000)
        let log = try EventLog.open(
            at: directory.path, configuration: configuration(clock: clock, segmentSize: 4096, indexInterval: 256))
        // Ten events per millisecond, several events sharing each timestamp.
        for sequence in 1...2_000 as ClosedRange<UInt64> {
            try log.append(syntheticPayload(sequence))
            if sequence % 10 == 0 { clock.advance(microseconds: 1_000) }
        }
        try log.close()
        let reader = try LogReader(directory: directory.path)
        let all = try readAll(directory.path)
        for probe in [0, 1_000_000, 1_000_001, 1_050_000, 1_050_500, 1_199_000, 1_200_000, 9_999_999] as [Int64] {
            let since = LogTimestamp(microsecondsSinceEpoch: probe)
            let through = LogTimestamp(microsecondsSinceEpoch: probe + 2_000)
            let cursor = try reader.events(since: since, through: through)
            var seen: [UInt64] = []
            while let event = try cursor.next() { seen.append(event.sequence) }
            let expected = all.filter { $0.timestamp >= since && $0.timestamp <= through }.map(\.sequence)
            #expect(seen == expected, "since \(probe)")
        }
    }

    @Test(arguments: [LogConfiguration.Durability.always, .interval(.milliseconds(5)), .none])
    func everyDurabilityPolicyRoundTrips(_ durability: LogConfiguration.Durability) async throws {
        let directory = TemporaryFolder.made()
        let log = try EventLog.open(at: directory.path, configuration: configuration(durability: durability))
        for sequence in 1...300 as ClosedRange<UInt64> {
            #expect(try await log.append(syntheticPayload(sequence)) == sequence)
        }
        try log.close()
        try expectExactly(directory.path, count: 300)
    }
}
