/// A pin's identity: a random 64-bit number, shown as 16 hexadecimal digits.
///
/// ```swift
/// let id = PinID(0x3fa2_9c01_0000_0001)
/// id.description                         // "3fa29c0100000001"
/// PinID(parsing: "3fa29c0100000001")     // the same id
/// ```
public struct PinID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses exactly 16 hexadecimal digits; nil for anything else.
    public init?(parsing text: String) {
        guard text.utf8.count == 16, let value = UInt64(text, radix: 16) else { return nil }
        rawValue = value
    }

    public var description: String {
        let digits = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    public static func < (a: PinID, b: PinID) -> Bool { a.rawValue < b.rawValue }
}

/// Where new pin ids come from. Inject a fixed sequence in tests.
public protocol PinIDGenerator: Sendable {
    func next() -> PinID
}

/// Random ids from the system's generator (never 0).
public struct RandomPinIDs: PinIDGenerator {
    public init() {}

    public func next() -> PinID {
        var generator = SystemRandomNumberGenerator()
        return PinID(UInt64.random(in: 1...UInt64.max, using: &generator))
    }
}

/// The SHA-256 of a photo's bytes: the name of its blob.
///
/// ```swift
/// PhotoDigest(hex: "e3b0c442…b855")   // 64 lowercase or uppercase hex digits, else nil
/// ```
///
/// Stored inline as four 64-bit words (big-endian), not as an array: a digest costs no
/// allocation, and hashing and comparing it touch four words. Replay folds one per downloaded
/// photo, so this shows in replay speed.
public struct PhotoDigest: Hashable, Sendable, CustomStringConvertible {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// Nil unless `bytes` holds exactly 32 bytes.
    public init?<C: Collection>(bytes: C) where C.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
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

    /// The 32 bytes.
    public var bytes: [UInt8] {
        [words.0, words.1, words.2, words.3].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
    }

    public static func == (a: PhotoDigest, b: PhotoDigest) -> Bool {
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
            guard let high = PhotoDigest.nibble(utf8[index]), let low = PhotoDigest.nibble(utf8[index + 1]) else {
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
