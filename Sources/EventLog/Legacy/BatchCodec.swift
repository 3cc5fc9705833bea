/// Gathers events into one batch and encodes it (FORMAT.md, "Batch header" and "Raw payload").
///
/// ```swift
/// var builder = BatchBuilder()
/// builder.add(Array("hello".utf8), at: t)
/// let header = builder.encode(firstSequence: 1, previousHash: genesis, compressor: zstd, into: &bytes)
/// ```
///
/// The buffers are kept between batches, so a writer reusing one builder allocates nothing in
/// the steady state. Encoding is O(total bytes).
struct BatchBuilder {
    private(set) var raw: [UInt8] = []
    private(set) var count: UInt32 = 0
    private(set) var firstTimestamp = LogTimestamp(microsecondsSinceEpoch: 0)
    private(set) var lastTimestamp = LogTimestamp(microsecondsSinceEpoch: 0)
    private var compressed: [UInt8] = []

    var isEmpty: Bool { count == 0 }

    /// Adds one event. Timestamps must not decrease within a batch (the caller checks).
    mutating func add(_ payload: UnsafeRawBufferPointer, at time: LogTimestamp) {
        precondition(count == 0 || time >= lastTimestamp, "timestamps must not decrease")
        if count == 0 { firstTimestamp = time; lastTimestamp = time }
        raw.appendVarint(UInt64(time.microsecondsSinceEpoch &- lastTimestamp.microsecondsSinceEpoch))
        raw.appendVarint(UInt64(payload.count))
        raw.append(contentsOf: payload)
        lastTimestamp = time
        count += 1
    }

    mutating func add(_ payload: [UInt8], at time: LogTimestamp) {
        payload.withUnsafeBytes { add($0, at: time) }
    }

    mutating func reset() {
        raw.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Appends the batch's bytes (header, then stored payload) to `output` and returns its
    /// header. zstd is used only when it makes the payload smaller.
    mutating func encode(
        firstSequence: UInt64, previousHash: ChainHash, compressor: ZstdCompressor?, into output: inout [UInt8]
    ) -> BatchHeader {
        precondition(count > 0 && raw.count <= LegacyFormat.maxRawLength)
        compressed.removeAll(keepingCapacity: true)
        var codec = LegacyFormat.Codec.raw
        if let compressor, raw.withUnsafeBytes({ compressor.compress($0, appendingTo: &compressed) }) != nil,
            compressed.count < raw.count
        {
            codec = .zstd
        }
        let headerStart = output.count
        func emit(_ payload: UnsafeRawBufferPointer) {
            BatchHeader.encode(
                codec: codec, firstSequence: firstSequence, eventCount: count, rawLength: UInt32(raw.count),
                firstTimestamp: firstTimestamp, lastTimestamp: lastTimestamp, previousHash: previousHash,
                payload: payload, into: &output)
            output.append(contentsOf: payload)
        }
        if codec == .zstd { compressed.withUnsafeBytes(emit) } else { raw.withUnsafeBytes(emit) }
        let headerBytes = output.withUnsafeBytes {
            UnsafeRawBufferPointer(rebasing: $0[headerStart..<headerStart + LegacyFormat.batchHeaderSize])
        }
        guard case .success(let header) = BatchHeader.decode(headerBytes) else {
            preconditionFailure("the builder wrote a header it cannot read back")
        }
        return header
    }
}

/// A batch whose payload was checked and decompressed, ready to hand out events.
///
/// Decoding walks every record once to check the structure before any event is handed out, so
/// a batch is either read whole or refused whole: never half-applied.
struct DecodedBatch {
    let header: BatchHeader
    let raw: [UInt8]

    /// Checks the structure of a stored payload whose checksum already matched. Returns the
    /// broken rule when the payload does not decode.
    static func decode(
        _ header: BatchHeader, stored: UnsafeRawBufferPointer, decompressor: ZstdDecompressor
    ) -> Result<DecodedBatch, DamageReason> {
        let raw: [UInt8]
        switch header.codec {
        case .raw:
            raw = Array(stored)
        case .zstd:
            guard let output = decompressor.decompress(stored, rawLength: Int(header.rawLength)) else {
                return .failure(DamageReason("a zstd payload that does not decompress to \(header.rawLength) bytes"))
            }
            raw = output
        }
        if let problem = raw.withUnsafeBytes({ validate(header, $0) }) { return .failure(problem) }
        return .success(DecodedBatch(header: header, raw: raw))
    }

    private static func validate(_ header: BatchHeader, _ raw: UnsafeRawBufferPointer) -> DamageReason? {
        var cursor = ByteCursor(raw)
        var time = header.firstTimestamp.microsecondsSinceEpoch
        for index in 0..<header.eventCount {
            guard let delta = cursor.readVarint(), let length = cursor.readVarint() else {
                return DamageReason("event \(index) of the batch has a malformed varint")
            }
            guard delta <= UInt64(Int64.max), !time.addingReportingOverflow(Int64(delta)).overflow else {
                return DamageReason("event \(index) overflows time")
            }
            guard length <= UInt64(cursor.remaining) else {
                return DamageReason("event \(index) claims \(length) bytes but \(cursor.remaining) remain")
            }
            if index == 0, delta != 0 { return DamageReason("the first event's time delta is not zero") }
            time += Int64(delta)
            cursor.position += Int(length)
        }
        guard cursor.remaining == 0 else { return DamageReason("\(cursor.remaining) bytes follow the last event") }
        guard time == header.lastTimestamp.microsecondsSinceEpoch else {
            return DamageReason("the events' times end at \(time), not at the header's last timestamp")
        }
        return nil
    }

    /// The events, in order.
    func makeIterator() -> Iterator { Iterator(batch: self) }

    /// All events of the batch, as an array.
    var events: [LogEvent] {
        var iterator = makeIterator()
        var result: [LogEvent] = []
        result.reserveCapacity(Int(header.eventCount))
        while let event = iterator.next() { result.append(event) }
        return result
    }

    struct Iterator: IteratorProtocol {
        let batch: DecodedBatch
        var position = 0
        var sequence: UInt64
        var time: Int64

        init(batch: DecodedBatch) {
            self.batch = batch
            self.sequence = batch.header.firstSequence
            self.time = batch.header.firstTimestamp.microsecondsSinceEpoch
        }

        /// Moves past events before `target` without materialising them.
        mutating func skip(to target: UInt64) {
            while sequence < target, next() != nil {}
        }

        mutating func next() -> LogEvent? {
            guard sequence <= batch.header.lastSequence else { return nil }
            // The structure was validated in `decode`, so these reads cannot fail.
            let (delta, length, start) = batch.raw.withUnsafeBytes { bytes in
                var cursor = ByteCursor(bytes, position: position)
                let delta = cursor.readVarint()!
                let length = cursor.readVarint()!
                return (delta, Int(length), cursor.position)
            }
            time += Int64(delta)
            position = start + length
            defer { sequence += 1 }
            return LogEvent(
                sequence: sequence, timestamp: LogTimestamp(microsecondsSinceEpoch: time),
                payload: batch.raw[start..<position])
        }
    }
}
