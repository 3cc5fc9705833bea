/// A device's identity: the 16-byte id of the log it writes (docs/DEVICES.md, "The device id is
/// the log id"), shown as 32 lowercase hexadecimal digits.
///
/// ```swift
/// let id = try DeviceID(logID: identity.logID)
/// id.description               // "6f1c…" (32 digits)
/// DeviceID(parsing: id.description) == id
/// ```
///
/// Ordered by its bytes: the merged order's tie-break, the same on every device. Kept as two
/// words, not an array: every event of a store of several devices and every album carries one,
/// and a value with no reference in it costs the fold nothing to copy or compare.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The first and last 8 bytes, big-endian (so that comparing the words compares the bytes).
    private let high: UInt64
    private let low: UInt64

    /// A log id's length (FORMAT.md).
    public static let size = 16

    /// A log id as a device id; a log id is 16 bytes.
    public init(logID: [UInt8]) throws {
        guard logID.count == Self.size else {
            throw DeviceError(.invalidArgument, "a device id is \(Self.size) bytes, not \(logID.count)")
        }
        self.init(checked: logID)
    }

    /// `bytes` holds exactly 16.
    private init(checked bytes: [UInt8]) {
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Exactly 32 hexadecimal digits (either case); nil for anything else.
    public init?(parsing text: String) {
        let digits = Array(text.utf8)
        guard digits.count == 2 * Self.size else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.size)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(checked: bytes)
    }

    /// A new random id, for a new device (the system's generator).
    public static func random() -> DeviceID {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return try! DeviceID(logID: bytes)
    }

    /// The 16 bytes.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) } + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * Self.size)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The first 8 digits: enough to tell a person's few devices apart in a listing.
    public var short: String { String(description.prefix(8)) }

    public static func < (a: DeviceID, b: DeviceID) -> Bool { (a.high, a.low) < (b.high, b.low) }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
