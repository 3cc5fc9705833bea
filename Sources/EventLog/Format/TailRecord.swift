/// One hot-tail record: a commit's events behind at most 8 bytes of framing (FORMAT.md,
/// "Hot-tail record: one commit").
///
/// ```swift
/// var builder = TailRecordBuilder()
/// builder.reset(timeBefore: lastTime)
/// builder.add(payload, at: now)
/// builder.encode(compressor: zstd, into: &segmentBytes)
/// switch TailRecord.read(bytes, timeBefore: lastTime, decompressor: zstd) { … }
/// ```
public struct TailRecord {
    /// Bytes the record takes on disk: head, body and CRC.
    public let size: Int
    /// True when the body was a zstd frame.
    public let isCompressed: Bool
    let run: EventRun

    public var eventCount: Int { run.count }
    /// The time of the record's last event: what the next record counts from.
    public var lastTime: Int64 { run.lastTime }

    /// The record's events, numbered from `firstSequence`.
    public func events(firstSequence: UInt64) -> [LogEvent] {
        var iterator = run.makeIterator(firstSequence: firstSequence)
        var events: [LogEvent] = []
        events.reserveCapacity(run.count)
        while let event = iterator.next() { events.append(event) }
        return events
    }

    /// What is at a position of a segment's data.
    public enum Read {
        case record(TailRecord)
        /// The end of data: no bytes left, or a zero byte (FORMAT.md, "Zero tail").
        case end
        /// Not a valid record. `definite` when no crash can explain it (the CRC holds but the
        /// contents break a rule): corruption wherever it is. Otherwise it may be a torn write.
        case damaged(reason: String, definite: Bool)
    }

    /// A record's framing, checked: its head, its size within the bytes, its CRC.
    enum Frame {
        case framed(headLength: Int, storedLength: Int, isCompressed: Bool)
        case end
        case damaged(reason: String)

        /// The whole record's bytes: head, body, CRC.
        static func size(headLength: Int, storedLength: Int) -> Int { headLength + storedLength + LogFormat.recordCRCSize }
    }

    /// Checks the framing and the CRC of the record at the start of `bytes`, and nothing of what
    /// it holds (FORMAT.md, "Hot-tail record": the first two rules).
    static func frame(_ bytes: UnsafeRawBufferPointer) -> Frame {
        guard let first = bytes.first, first != 0 else { return .end }
        var cursor = ByteCursor(bytes)
        guard let head = cursor.readVarint(), cursor.position <= LogFormat.maxRecordHeadLength else {
            if bytes.count < LogFormat.maxRecordHeadLength, bytes.allSatisfy({ $0 >= 0x80 }) {
                return .damaged(reason: "an incomplete record head (\(bytes.count) bytes)")
            }
            return .damaged(reason: "a malformed record head")
        }
        let storedLength = head >> 1
        guard storedLength >= UInt64(LogFormat.minRecordStoredLength), storedLength <= UInt64(LogFormat.maxRawLength) else {
            return .damaged(reason: "a record head stating \(storedLength) stored bytes")
        }
        let headLength = cursor.position
        let size = Frame.size(headLength: headLength, storedLength: Int(storedLength))
        guard size <= bytes.count else { return .damaged(reason: "an incomplete record (\(bytes.count) of \(size) bytes)") }
        let covered = UnsafeRawBufferPointer(rebasing: bytes[0..<headLength + Int(storedLength)])
        guard CRC32C.checksum(covered) == UInt32(littleEndianBytes: bytes, at: headLength + Int(storedLength)) else {
            return .damaged(reason: "a record that fails its checksum")
        }
        return .framed(headLength: headLength, storedLength: Int(storedLength), isCompressed: head & 1 == 1)
    }

    /// Reads the record at the start of `bytes` (everything available from that position).
    /// Checks the framing, the CRC, the codec and every event: a `.record` is whole and valid.
    public static func read(
        _ bytes: UnsafeRawBufferPointer, timeBefore: Int64, decompressor: ZstdDecompressor
    ) -> Read {
        let headLength: Int, storedLength: Int, isCompressed: Bool
        switch frame(bytes) {
        case .end: return .end
        case .damaged(let reason): return .damaged(reason: reason, definite: false)
        case .framed(let head, let stored, let compressed): (headLength, storedLength, isCompressed) = (head, stored, compressed)
        }
        let size = Frame.size(headLength: headLength, storedLength: storedLength)
        let body = UnsafeRawBufferPointer(rebasing: bytes[headLength..<headLength + storedLength])
        let raw: [UInt8]
        if isCompressed {
            switch decompressor.decompressSingleFrame(body, maxRawLength: LogFormat.maxRawLength) {
            case .success(let output): raw = output
            case .failure(let reason): return .damaged(reason: "a record whose \(reason)", definite: true)
            }
        } else {
            raw = Array(body)
        }
        switch EventRun.parse(raw, layout: .rows, count: nil, timeBefore: timeBefore, hasErasures: false) {
        case .success(let run):
            return .record(TailRecord(size: size, isCompressed: isCompressed, run: run))
        case .failure(let reason):
            return .damaged(reason: "a record whose checksum holds but whose events do not parse: \(reason)", definite: true)
        }
    }
}

/// Gathers a commit's events and encodes them as one record. Keeps its buffers between records,
/// so a writer that reuses one allocates nothing in the steady state. O(bytes) per record.
public struct TailRecordBuilder {
    private var raw: [UInt8] = []
    private var compressed: [UInt8] = []
    public private(set) var count = 0
    public private(set) var lastTime: Int64 = LogFormat.timeBeforeFirstEvent

    /// Bodies smaller than this are stored raw without trying zstd: a frame's own header
    /// leaves nothing to gain on a single small event.
    static let compressionThreshold = 256

    public init() {}

    /// Starts a record after an event at `timeBefore`.
    public mutating func reset(timeBefore: Int64) {
        raw.removeAll(keepingCapacity: true)
        count = 0
        lastTime = timeBefore
    }

    public var rawCount: Int { raw.count }

    /// Adds one event; `time` must not be before the previous event's.
    public mutating func add(_ payload: UnsafeRawBufferPointer, at time: Int64) {
        precondition(time >= lastTime, "times must not decrease")
        raw.appendVarint(UInt64(bitPattern: time &- lastTime))
        raw.appendVarint(UInt64(payload.count))
        raw.append(contentsOf: payload)
        lastTime = time
        count += 1
    }

    public mutating func add(_ payload: [UInt8], at time: Int64) {
        payload.withUnsafeBytes { add($0, at: time) }
    }

    /// Appends the record (head, body, CRC) to `output`; returns its size.
    @discardableResult
    public mutating func encode(compressor: ZstdCompressor?, into output: inout [UInt8]) -> Int {
        precondition(count > 0 && raw.count <= LogFormat.maxRawLength)
        var codec: UInt64 = 0
        if let compressor, raw.count >= TailRecordBuilder.compressionThreshold {
            compressed.removeAll(keepingCapacity: true)
            if raw.withUnsafeBytes({ compressor.compress($0, appendingTo: &compressed) }) != nil,
                compressed.count < raw.count
            {
                codec = 1
            }
        }
        let start = output.count
        let bodyLength = codec == 1 ? compressed.count : raw.count
        output.appendVarint(UInt64(bodyLength) << 1 | codec)
        if codec == 1 { output.append(contentsOf: compressed) } else { output.append(contentsOf: raw) }
        output.appendLittleEndian(CRC32C.checksum(output[start...]))
        return output.count - start
    }
}
