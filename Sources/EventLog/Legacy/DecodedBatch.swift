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
