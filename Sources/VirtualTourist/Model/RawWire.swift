/// The protobuf wire format over raw bytes, just enough to find one field: tags, varints,
/// fixed numbers and length-delimited bodies. Every read checks the bounds; a failed read
/// leaves the cursor short of its end, which its callers treat as a payload that does not parse.
struct RawWire {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    private var failed = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { !failed && position == bytes.count }

    /// The next field's number and wire type; nil at the end or on a bad tag.
    mutating func tag() -> (UInt64, UInt64)? {
        guard position < bytes.count, let tag = varint(), tag >> 3 != 0 else { return nil }
        return (tag >> 3, tag & 7)
    }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        failed = true
        return nil
    }

    mutating func fixed64() -> UInt64? {
        guard bytes.count - position >= 8 else {
            failed = true
            return nil
        }
        defer { position += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    mutating func lengthDelimited() -> UnsafeRawBufferPointer? {
        guard let length = varint(), length <= UInt64(bytes.count - position) else {
            failed = true
            return nil
        }
        defer { position += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + Int(length)])
    }

    /// Steps over a field of wire type 0, 1 or 5; false for any other or a short read.
    mutating func skip(_ wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1, 5:
            let size = wireType == 1 ? 8 : 4
            guard bytes.count - position >= size else {
                failed = true
                return false
            }
            position += size
            return true
        default:
            failed = true
            return false
        }
    }
}
