import EventLog
import Foundation
@testable import Replication
import StorageTestSupport
import Testing
import VirtualTourist

@Suite("Replication messages and rebuilding a log")
struct ReplicationBatchTests {
    func events(_ count: Int, from first: UInt64 = 1) -> [LogEvent] {
        (0..<count).map { index in
            let payload = Array("event \(first + UInt64(index))".utf8)
            return LogEvent(
                sequence: first + UInt64(index), timestamp: LogTimestamp(microsecondsSinceEpoch: 1_000 + Int64(index)),
                payload: payload[...])
        }
    }

    @Test("a batch reads back as written, erased events included")
    func roundTrip() throws {
        var list = events(5)
        let erased = Array(repeating: UInt8(7), count: 32) + [1, 2]
        list[2] = LogEvent(sequence: 3, timestamp: list[2].timestamp, payload: erased[...], isErased: true)
        let batch = ReplicationBatch(events: list, head: ChainHash(validating: Array(repeating: 9, count: 32))!)
        let back = try ReplicationBatch(decoding: batch.encoded(), where: "test")
        #expect(back == batch)
        #expect(back.events[2].isErased)
    }

    @Test("every flipped byte and every cut is refused with a message")
    func damageIsRefused() throws {
        let bytes = ReplicationBatch(events: events(3), head: ChainHash(validating: Array(repeating: 1, count: 32))!).encoded()
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x10
            #expect(throws: ReplicationError.self) { _ = try ReplicationBatch(decoding: damaged, where: "test") }
        }
        for length in 0..<bytes.count {
            #expect(throws: ReplicationError.self) { _ = try ReplicationBatch(decoding: Array(bytes[..<length]), where: "test") }
        }
    }

    @Test("a count or a first sequence its bytes cannot bear is refused, checksum and all")
    func claimsBeyondTheBytesAreRefused() throws {
        let bytes = ReplicationBatch(events: events(2), head: ChainHash(validating: Array(repeating: 1, count: 32))!).encoded()
        func with(_ value: some FixedWidthInteger, at offset: Int) -> [UInt8] {
            var changed = Array(bytes[..<(bytes.count - 4)])
            withUnsafeBytes(of: value.littleEndian) { changed.replaceSubrange(offset..<offset + $0.count, with: $0) }
            withUnsafeBytes(of: CRC32C.checksum(changed).littleEndian) { changed.append(contentsOf: $0) }
            return changed
        }
        // Four billion events would be a reservation of hundreds of gigabytes before the first
        // was read; a first sequence near the end would overflow counting the second.
        let cases: [([UInt8], String)] = [
            (with(UInt32.max, at: 12), "more than its"), (with(UInt32(3), at: 12), "ends inside event 3"),
            (with(UInt64.max, at: 4), "past the last sequence number"),
        ]
        for (damaged, reason) in cases {
            let error = #expect(throws: ReplicationError.self) { _ = try ReplicationBatch(decoding: damaged, where: "test") }
            #expect(error.map { "\($0)" }?.contains(reason) == true, "\(String(describing: error))")
        }
        // The last two sequence numbers there are can still be shipped.
        #expect(try ReplicationBatch(decoding: with(UInt64.max - 1, at: 4), where: "test").lastSequence == .max)
    }

    @Test("a log rebuilt from another's events has the same head after every event, erased ones too")
    func builderReproducesTheChain() throws {
        let original = TemporaryFolder.uniquePath("replication-built-original")
        let copy = TemporaryFolder.uniquePath("replication-built-copy")
        defer { for folder in [original, copy] { try? FileManager.default.removeItem(atPath: folder) } }
        var configuration = LogConfiguration()
        configuration.payloadCodec = EventCodec.blockCodec
        configuration.blockSize = 4096  // several blocks and files
        let log = try EventLog.open(at: original, configuration: configuration)
        for chunk in 0..<40 {
            try log.append(contentsOf: (0..<50).map { Array("payload \(chunk)-\($0) ".utf8) + Array(repeating: UInt8(chunk), count: $0) })
        }
        _ = try log.compact()
        _ = try log.erase([77: [1, 2, 3], 1_500: []])
        try log.close()
        let reader = try LogReader(directory: original, payloadCodec: EventCodec.blockCodec)
        let identity = try #require(try reader.identity())
        var builder = try LogBuilder(directory: copy, identity: identity, configuration: configuration)
        let cursor = try reader.events(from: 1)
        while let event = try cursor.next() { try builder.add(event) }
        let head = try builder.finish()
        #expect(head == (try reader.head(at: 2_000)))
        let rebuilt = try LogReader(directory: copy, payloadCodec: EventCodec.blockCodec)
        for sequence in stride(from: UInt64(0), through: 2_000, by: 37) {
            #expect(try rebuilt.head(at: sequence) == reader.head(at: sequence))
        }
        #expect(try rebuilt.event(at: 77)?.isErased == true)
        #expect(try LogVerifier.verify(directory: copy, payloadCodec: EventCodec.blockCodec).isClean)
        // The rebuilt log takes appends as any log does, and its chain goes on.
        let reopened = try EventLog.open(at: copy)
        _ = try reopened.append(Array("after".utf8))
        #expect(reopened.lastSequence == 2_001)
        try reopened.close()
        #expect(try LogVerifier.verify(directory: copy, payloadCodec: EventCodec.blockCodec).isClean)

        var wrongOrder = try LogBuilder(directory: copy + "-x", identity: identity)
        defer { wrongOrder.abandon() }
        #expect(throws: LogError.self) { try wrongOrder.add(events(1, from: 2)[0]) }
    }
}
