// Little-endian integers and varints over raw bytes (FORMAT.md, "Conventions").
//
// Naming follows swift-nio: `read*` consumes from a cursor, `get*(at:)` peeks, `append*` writes.
// Short input returns nil; the callers decide whether that is "wait for more" or damage.

extension FixedWidthInteger {
    /// The integer stored little-endian at `offset` (no bounds check beyond the buffer's own).
    @inlinable @inline(__always)
    public init(littleEndianBytes bytes: UnsafeRawBufferPointer, at offset: Int) {
        self = Self(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Self.self))
    }
}

extension Array where Element == UInt8 {
    @inline(__always)
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// Appends `value` as an unsigned LEB128 varint (public, inlinable: a payload codec writes
    /// many of them).
    @inlinable @inline(__always)
    public mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }

    /// Overwrites `MemoryLayout<T>.size` bytes at `offset` with `value`, little-endian.
    @inline(__always)
    mutating func setLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self) }
    }

    /// The integer stored little-endian at `offset`.
    @inline(__always)
    func getLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        withUnsafeBytes { T(littleEndianBytes: $0, at: offset) }
    }
}

extension UInt64 {
    /// Bytes of this number as a varint.
    @inlinable @inline(__always)
    public var varintSize: Int { Swift.max(1, (64 - leadingZeroBitCount + 6) / 7) }
}

/// A forward-only reader of varints and byte runs over a buffer (public, inlinable: a payload
/// codec reads many of them).
public struct ByteCursor {
    public let bytes: UnsafeRawBufferPointer
    public var position: Int

    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    @inlinable
    public var remaining: Int { bytes.count - position }

    /// Reads an unsigned LEB128 varint. Returns nil when the buffer ends inside it or when it
    /// is longer than ten bytes or does not fit in 64 bits (both are damage to the caller).
    @inlinable @inline(__always)
    public mutating func readVarint() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var index = position
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if shift == 63, byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                position = index
                return result
            }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}

/// Lowercase hexadecimal, for hashes and ids in messages and documents.
func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
