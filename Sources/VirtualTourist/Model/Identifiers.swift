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
public struct PhotoDigest: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes.
    public let bytes: [UInt8]

    /// Nil unless `bytes` holds exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
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
        self.bytes = bytes
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
