import Crypto

/// The SHA-256 of a blob's bytes: its name.
///
/// ```swift
/// BlobDigest(hex: "e3b0c442…b855")   // 64 lowercase or uppercase hex digits, else nil
/// ```
///
/// Stored inline as four 64-bit words (big-endian), not as an array: a digest costs no
/// allocation, and hashing and comparing it touch four words. The app's replay folds one per
/// downloaded photo, so this shows in replay speed.
public struct BlobDigest: Hashable, Sendable, CustomStringConvertible {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// Nil unless `bytes` holds exactly 32 bytes.
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
        // Contiguous bytes (arrays, Data, buffers): four loads instead of 32 shifts.
        if let words = bytes.withContiguousStorageIfAvailable({ buffer in
            let raw = UnsafeRawBufferPointer(buffer)
            func word(_ offset: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            return (word(0), word(8), word(16), word(24))
        }) {
            self.words = words
            return
        }
        var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0
        var index = 0
        for byte in bytes {
            switch index >> 3 {
            case 0: w0 = w0 << 8 | UInt64(byte)
            case 1: w1 = w1 << 8 | UInt64(byte)
            case 2: w2 = w2 << 8 | UInt64(byte)
            default: w3 = w3 << 8 | UInt64(byte)
            }
            index += 1
        }
        words = (w0, w1, w2, w3)
    }

    /// The four 64-bit words folded into one, for a table of digests that places them by it
    /// instead of hashing them with SipHash (a SHA-256 is uniform already, and SipHash over 32
    /// bytes was the largest cost of loading a snapshot: docs/BENCHMARKS.md). Not keyed:
    /// digests made to share it cost such a table speed, never correctness.
    public var foldedWord: UInt64 { words.0 ^ words.1 ^ words.2 ^ words.3 }

    /// The first byte: the blob's fan-out folder.
    var firstByte: UInt8 { UInt8(truncatingIfNeeded: words.0 >> 56) }

    /// The 32 bytes.
    public var bytes: [UInt8] {
        [words.0, words.1, words.2, words.3].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
    }

    /// The 32 bytes where they lie, without making an array (a snapshot writes one a photo).
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let big = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return try Swift.withUnsafeBytes(of: big) { try body($0) }
    }

    public static func == (a: BlobDigest, b: BlobDigest) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    public func hash(into hasher: inout Hasher) {
        // The bytes are already uniformly random: any one word identifies a digest well.
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// Parses 64 hexadecimal digits; nil for anything else (no path tricks get through).
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = BlobDigest.nibble(utf8[index]), let low = BlobDigest.nibble(utf8[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        self.init(bytes: bytes)
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The SHA-256 of `bytes`.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> BlobDigest {
        BlobDigest(bytes: Array(SHA256.hash(data: bytes)))!
    }

    public static func of(_ bytes: [UInt8]) -> BlobDigest {
        bytes.withUnsafeBytes { of($0) }
    }

    /// 64 lowercase hexadecimal digits.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
