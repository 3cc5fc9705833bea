/// Deterministic synthetic events for the demo, the benchmarks and the tests: the payload of an
/// event is a function of its sequence number, so a reader can check every byte without having
/// kept a copy.
///
/// ```swift
/// SyntheticEvents.payload(for: 42)            // 100 bytes, starting "event 42 "
/// SyntheticEvents.isPayload(bytes, of: 42)    // true
/// ```
public enum SyntheticEvents {
    /// About the size of a small app event (a pin dropped, a photo downloaded).
    public static let defaultSize = 100

    /// `event <sequence> ` then lowercase letters from a xorshift stream seeded by the sequence:
    /// text-like, so it compresses about as real events do.
    public static func payload(for sequence: UInt64, size: Int = defaultSize) -> [UInt8] {
        var bytes = Array("event \(sequence) ".utf8)
        bytes.reserveCapacity(max(size, bytes.count))
        var state = sequence &* 0x9E37_79B9_7F4A_7C15 | 1
        while bytes.count < size {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            bytes.append(UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 59) % 16 + 97)
        }
        return bytes
    }

    public static func isPayload<C: Collection>(_ bytes: C, of sequence: UInt64, size: Int = defaultSize) -> Bool
    where C.Element == UInt8 {
        bytes.elementsEqual(payload(for: sequence, size: size))
    }
}
