import CSHA256
import Crypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The tamper-evidence chain over events (FORMAT.md, "The event chain").
///
/// ```swift
/// var chain = EventChain(anchor: EventChain.anchor(logID: id))
/// chain.append(time: t, payload: bytes)          // event 1
/// chain.head                                     // head(1): the same however events are stored
/// ```
///
/// Each event costs three SHA-256 computations (its payload, its leaf, the step), with no
/// allocation: the running head is kept as four words. O(payload length) per event. On a CPU
/// with the SHA extensions they run in ``FastSHA256`` (the per-call cost of a general hashing
/// API was most of compaction's time: docs/BENCHMARKS.md), elsewhere in swift-crypto.
public struct EventChain: Sendable, Equatable {
    /// The sequence number of the last event hashed (0 before the first).
    public private(set) var sequence: UInt64
    private var words: Words

    /// A chain that continues from `head`, the hash after event `sequence`.
    public init(head: ChainHash, after sequence: UInt64 = 0) {
        self.sequence = sequence
        self.words = Words(head.bytes)
    }

    /// The head hash after ``sequence``.
    public var head: ChainHash { ChainHash(bytes: words.bytes) }

    /// head(0): SHA-256(0x02 ‖ "VTLOG2" ‖ log_id ‖ u64 origin_sequence ‖ origin_hash).
    /// `originHash` is nil (zeros) unless the log was upgraded from format 1.
    public static func anchor(logID: [UInt8], originSequence: UInt64 = 0, originHash: ChainHash? = nil) -> ChainHash {
        precondition(logID.count == LogFiles.logIDSize, "a log id is 16 bytes")
        var input: [UInt8] = [LogFormat.anchorTag]
        input.append(contentsOf: LogFormat.anchorLabel)
        input.append(contentsOf: logID)
        input.appendLittleEndian(originSequence)
        input.append(contentsOf: originHash?.bytes ?? [UInt8](repeating: 0, count: 32))
        return ChainHash.of(input)
    }

    /// SHA-256 of a payload: what an erased event keeps.
    public static func digest(of payload: UnsafeRawBufferPointer) -> [UInt8] {
        Words.sha256(payload).bytes
    }

    /// Hashes the next event, whose payload is given.
    public mutating func append(time: LogTimestamp, payload: UnsafeRawBufferPointer) {
        append(time: time, digest: Words.sha256(payload))
    }

    public mutating func append(time: LogTimestamp, payload: ArraySlice<UInt8>) {
        payload.withUnsafeBytes { append(time: time, payload: $0) }
    }

    /// Hashes the next event from its payload's digest (an erased event keeps only that).
    public mutating func append(time: LogTimestamp, digest: UnsafeRawBufferPointer) {
        precondition(digest.count == LogFormat.digestSize, "a payload digest is 32 bytes")
        append(time: time, digest: Words(digest))
    }

    /// Hashes an event as the log holds it: by its payload, or an erased one by its digest.
    public mutating func append(_ event: LogEvent) {
        if let digest = event.erasedDigest {
            digest.withUnsafeBytes { append(time: event.timestamp, digest: $0) }
        } else {
            append(time: event.timestamp, payload: event.payload)
        }
    }

    /// leaf(i) = SHA-256(0x00 ‖ u64 sequence ‖ i64 time ‖ digest).
    public static func leaf(sequence: UInt64, time: LogTimestamp, digest: [UInt8]) -> ChainHash {
        precondition(digest.count == LogFormat.digestSize)
        return ChainHash(bytes: Words.leaf(sequence: sequence, time: time, digest: Words(digest)).bytes)
    }

    private mutating func append(time: LogTimestamp, digest: Words) {
        sequence += 1
        let leaf = Words.leaf(sequence: sequence, time: time, digest: digest)
        // head(i) = SHA-256(0x01 ‖ head(i − 1) ‖ leaf(i))
        var input: (Words, Words, Words) = (.zero, .zero, .zero)  // 96 bytes of room; 65 used
        withUnsafeMutableBytes(of: &input) { raw in
            raw[0] = LogFormat.stepTag
            withUnsafeBytes(of: words) { raw.baseAddress!.advanced(by: 1).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            withUnsafeBytes(of: leaf) { raw.baseAddress!.advanced(by: 33).copyMemory(from: $0.baseAddress!, byteCount: 32) }
        }
        words = withUnsafeBytes(of: &input) { Words.sha256(UnsafeRawBufferPointer(rebasing: $0[0..<65])) }
    }

    /// 32 bytes as four words, in memory order (so their bytes are the hash's bytes).
    struct Words: Equatable, Sendable {
        var a: UInt64, b: UInt64, c: UInt64, d: UInt64

        static let zero = Words(a: 0, b: 0, c: 0, d: 0)

        init(a: UInt64, b: UInt64, c: UInt64, d: UInt64) {
            self.a = a; self.b = b; self.c = c; self.d = d
        }

        init(_ bytes: UnsafeRawBufferPointer) {
            a = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            b = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            c = bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
            d = bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        }

        init(_ bytes: [UInt8]) {
            self = bytes.withUnsafeBytes { Words($0) }
        }

        init(_ digest: SHA256.Digest) {
            self = digest.withUnsafeBytes { Words($0) }
        }

        var bytes: [UInt8] { withUnsafeBytes(of: self) { Array($0) } }

        /// leaf = SHA-256(0x00 ‖ u64 sequence ‖ i64 time ‖ digest): 49 bytes.
        static func leaf(sequence: UInt64, time: LogTimestamp, digest: Words) -> Words {
            var input: (Words, Words) = (.zero, .zero)  // 64 bytes of room; 49 used
            withUnsafeMutableBytes(of: &input) { raw in
                raw[0] = LogFormat.leafTag
                raw.storeBytes(of: sequence.littleEndian, toByteOffset: 1, as: UInt64.self)
                raw.storeBytes(of: time.microsecondsSinceEpoch.littleEndian, toByteOffset: 9, as: Int64.self)
                withUnsafeBytes(of: digest) { raw.baseAddress!.advanced(by: 17).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            }
            return withUnsafeBytes(of: &input) { sha256(UnsafeRawBufferPointer(rebasing: $0[0..<49])) }
        }

        /// SHA-256 of `bytes`, on the SHA extensions when the CPU has them.
        static func sha256(_ bytes: UnsafeRawBufferPointer) -> Words {
            guard FastSHA256.isAvailable else { return Words(SHA256.hash(data: bytes)) }
            var out = Words.zero
            withUnsafeMutableBytes(of: &out) { target in
                // A zero-length buffer may have no address; any valid one will do.
                withUnsafeBytes(of: 0 as UInt8) { dummy in
                    vt_sha256(bytes.baseAddress ?? dummy.baseAddress!, bytes.count, target.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            return out
        }
    }
}
