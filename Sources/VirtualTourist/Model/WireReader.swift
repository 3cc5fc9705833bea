import DeviceLogs

/// A reader of protobuf's binary wire format over bytes in memory, for the decoders that go
/// straight from a payload to domain values (``EventWireDecoder``, ``SnapshotWireDecoder``).
///
/// It reads only the plain, canonical shape our writer produces. Anything else — a malformed
/// varint, a truncated field, an unexpected wire type, a group, invalid UTF-8 — stops it with
/// ``WireReader/Unusual``, and the caller hands the whole input to swift-protobuf's generated
/// decoder, which either decodes it by the full rules or names what is wrong. So the fast path
/// never decides what a payload means on its own.
struct WireReader {
    /// Not an error to report: "leave this input to the general decoder".
    struct Unusual: Error {}

    enum WireType: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5
    }

    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private var end: Int { bytes.count }
    /// How many bytes are left to read.
    var remaining: Int { end - position }

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// A reader of no bytes: an absent embedded message reads as its defaults.
    static var empty: WireReader { WireReader(UnsafeRawBufferPointer(start: nil, count: 0)) }

    /// The next field's number and wire type, or nil at the end.
    mutating func nextField() throws(Unusual) -> (number: UInt64, type: WireType)? {
        guard position < end else { return nil }
        let key = try varint()
        let number = key >> 3
        guard number > 0, number < 1 << 29, let type = WireType(rawValue: UInt8(key & 7)) else { throw Unusual() }
        return (number, type)
    }

    mutating func varint() throws(Unusual) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < end, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                // The tenth byte may only carry the top bit.
                guard shift < 63 || byte <= 1 else { throw Unusual() }
                return value
            }
            shift += 7
        }
        throw Unusual()
    }

    mutating func fixed64() throws(Unusual) -> UInt64 {
        guard end - position >= 8 else { throw Unusual() }
        defer { position += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// The bytes of a length-delimited field.
    mutating func lengthDelimited() throws(Unusual) -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(end - position) else { throw Unusual() }
        let start = position
        position += Int(length)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
    }

    /// A reader over the next length-delimited field (an embedded message).
    mutating func message() throws(Unusual) -> WireReader { WireReader(try lengthDelimited()) }

    // Typed reads: each checks the wire type the schema gives the field.

    mutating func uint64(_ type: WireType) throws(Unusual) -> UInt64 {
        guard type == .varint else { throw Unusual() }
        return try varint()
    }

    mutating func uint32(_ type: WireType) throws(Unusual) -> UInt32 {
        let value = try uint64(type)
        guard value <= UInt64(UInt32.max) else { throw Unusual() }
        return UInt32(value)
    }

    mutating func double(_ type: WireType) throws(Unusual) -> Double {
        guard type == .fixed64 else { throw Unusual() }
        return Double(bitPattern: try fixed64())
    }

    mutating func fixed64(_ type: WireType) throws(Unusual) -> UInt64 {
        guard type == .fixed64 else { throw Unusual() }
        return try fixed64()
    }

    mutating func string(_ type: WireType) throws(Unusual) -> String {
        String(decoding: try utf8(type), as: UTF8.self)
    }

    /// A string field's bytes, checked to be UTF-8 (for keeping them as bytes).
    mutating func utf8(_ type: WireType) throws(Unusual) -> UnsafeRawBufferPointer {
        guard type == .lengthDelimited else { throw Unusual() }
        let bytes = try lengthDelimited()
        // Most text here is ASCII (ids, URLs, media types), valid UTF-8 as it stands; the
        // generic validating initializer costs more than the rest of a photo's decoding.
        if Self.isASCII(bytes) { return bytes }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw Unusual() }
        return bytes
    }

    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    mutating func digest(_ type: WireType) throws(Unusual) -> PhotoDigest {
        guard type == .lengthDelimited, let digest = PhotoDigest(bytes: try lengthDelimited()) else { throw Unusual() }
        return digest
    }

    /// A device id: exactly 16 bytes.
    mutating func deviceID(_ type: WireType) throws(Unusual) -> DeviceID {
        guard type == .lengthDelimited, case let bytes = try lengthDelimited(), bytes.count == DeviceID.size,
            let device = try? DeviceID(logID: Array(bytes))
        else { throw Unusual() }
        return device
    }

    mutating func message(_ type: WireType) throws(Unusual) -> WireReader {
        guard type == .lengthDelimited else { throw Unusual() }
        return try message()
    }

    /// Skips a field this reader does not know (a newer writer's), as protobuf does.
    mutating func skip(_ type: WireType) throws(Unusual) {
        switch type {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .lengthDelimited: _ = try lengthDelimited()
        case .fixed32:
            guard end - position >= 4 else { throw Unusual() }
            position += 4
        }
    }
}
