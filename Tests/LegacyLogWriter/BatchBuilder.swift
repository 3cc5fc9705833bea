@testable import EventLog
import FileIO

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
