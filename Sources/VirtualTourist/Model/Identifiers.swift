import BlobStore

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

/// A photo's SHA-256: the name of its blob (see ``BlobStore/BlobDigest``).
public typealias PhotoDigest = BlobDigest
