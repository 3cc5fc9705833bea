import EventLog
import Foundation

/// One message of a store's replication stream: consecutive events with their times and
/// erasures, and the chain's head after the last of them (docs/REPLICATION.md, "Messages").
///
/// Body, little-endian:
/// `"VTR1"`, first sequence (u64), event count (u32), head after the last event (32 bytes), then
/// per event its time in microseconds (i64), flags (u8, bit 0: erased), payload length (u32) and
/// payload; last, the CRC32C of everything before it (u32).
public struct ReplicationBatch: Equatable, Sendable {
    public var events: [LogEvent]
    /// The chain's head after the last event, as the shipping store computed it.
    public var head: ChainHash

    public init(events: [LogEvent], head: ChainHash) {
        precondition(!events.isEmpty, "a batch holds at least one event")
        self.events = events
        self.head = head
    }

    public var firstSequence: UInt64 { events[0].sequence }
    public var lastSequence: UInt64 { events[events.count - 1].sequence }

    static let magic: [UInt8] = Array("VTR1".utf8)
    static let fixedSize = 4 + 8 + 4 + 32 + 4
    static let perEventSize = 8 + 1 + 4

    /// The body's size for events of these payload sizes (to cut batches under a limit).
    static func encodedSize(payloadBytes: Int, count: Int) -> Int { fixedSize + count * perEventSize + payloadBytes }

    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.encodedSize(payloadBytes: events.reduce(0) { $0 + $1.payload.count }, count: events.count))
        bytes += Self.magic
        append(firstSequence, to: &bytes)
        append(UInt32(events.count), to: &bytes)
        bytes += head.bytes
        for event in events {
            append(UInt64(bitPattern: event.timestamp.microsecondsSinceEpoch), to: &bytes)
            bytes.append(event.isErased ? 1 : 0)
            append(UInt32(event.payload.count), to: &bytes)
            bytes += event.payload
        }
        append(CRC32C.checksum(bytes), to: &bytes)
        return bytes
    }

    /// Reads a body; any deviation is ``ReplicationError/malformedMessage``, named by `where`.
    public init(decoding bytes: [UInt8], where place: String) throws {
        func fail(_ reason: String) -> ReplicationError { .malformedMessage("\(place): \(reason)") }
        guard bytes.count >= Self.fixedSize, Array(bytes[0..<4]) == Self.magic else {
            throw fail("it is not a replication batch (no VTR1 header)")
        }
        let crcAt = bytes.count - 4
        guard CRC32C.checksum(bytes[..<crcAt]) == read(UInt32.self, bytes, at: crcAt) else {
            throw fail("its checksum does not match its bytes")
        }
        let first = read(UInt64.self, bytes, at: 4)
        let count = Int(read(UInt32.self, bytes, at: 12))
        guard first >= 1, count >= 1 else { throw fail("it holds no events, or starts before event 1") }
        // Both before anything is reserved or counted: a count is a claim until the bytes bear it out.
        guard count <= (crcAt - 48) / Self.perEventSize else {
            throw fail("it says it holds \(count) events, more than its \(bytes.count) bytes can")
        }
        guard first <= UInt64.max - UInt64(count - 1) else { throw fail("its events \(first)… would run past the last sequence number") }
        let head = ChainHash(validating: Array(bytes[16..<48]))!
        var events: [LogEvent] = []
        events.reserveCapacity(count)
        var offset = 48
        var lastTime = Int64.min
        for index in 0..<count {
            guard offset + Self.perEventSize <= crcAt else { throw fail("it ends inside event \(index + 1) of \(count)") }
            let time = Int64(bitPattern: read(UInt64.self, bytes, at: offset))
            let flags = bytes[offset + 8]
            let length = Int(read(UInt32.self, bytes, at: offset + 9))
            offset += Self.perEventSize
            guard flags <= 1 else { throw fail("event \(first + UInt64(index)) has unknown flags \(flags)") }
            guard length <= crcAt - offset else { throw fail("event \(first + UInt64(index))'s payload runs past the end") }
            guard time >= lastTime else { throw fail("event \(first + UInt64(index))'s time goes back") }
            let erased = flags == 1
            if erased, !LogEvent.isErasedLength(UInt64(length)) {
                throw fail("erased event \(first + UInt64(index)) has \(length) bytes, not a digest and what was kept")
            }
            events.append(LogEvent(
                sequence: first + UInt64(index), timestamp: LogTimestamp(microsecondsSinceEpoch: time),
                payload: bytes[offset..<offset + length], isErased: erased))
            offset += length
            lastTime = time
        }
        guard offset == crcAt else { throw fail("it has \(crcAt - offset) bytes after its last event") }
        self.events = events
        self.head = head
    }
}

private func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
}

private func read<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], at offset: Int) -> T {
    var value: T = 0
    withUnsafeMutableBytes(of: &value) { target in
        bytes.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + MemoryLayout<T>.size])) }
    }
    return T(littleEndian: value)
}
