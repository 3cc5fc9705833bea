import EventLog
/// Writing the rebuilt payloads into the raw payload's buffer, checked against its length.
extension FieldColumnsDecoder {

    @inline(__always)
    func reserve(_ bytes: Int) throws(DamageReason) {
        guard bytes <= capacity - count else { throw DamageReason("payloads longer than the raw length") }
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) throws(DamageReason) {
        try reserve(1)
        out[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func putVarint(_ value: UInt64) throws(DamageReason) {
        let size = value.varintSize
        try reserve(size)
        writeVarint(value, at: count)
        count += size
    }

    /// Writes `value` as a varint at `offset`, room for it already reserved.
    @inline(__always)
    func writeVarint(_ value: UInt64, at offset: Int) {
        var rest = value
        var at = offset
        while rest >= 0x80 {
            out[at] = UInt8(truncatingIfNeeded: rest) | 0x80
            at += 1
            rest >>= 7
        }
        out[at] = UInt8(rest)
    }

    @inline(__always)
    mutating func putLittleEndian(_ value: UInt64, bytes: Int) throws(DamageReason) {
        try reserve(bytes)
        for index in 0..<bytes { out[count + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
        count += bytes
    }

    @inline(__always)
    mutating func putForm(_ range: Range<Int>) throws(DamageReason) {
        try reserve(range.count)
        UnsafeMutableRawPointer(out + count).copyMemory(from: form.baseAddress! + range.lowerBound, byteCount: range.count)
        count += range.count
    }

    /// The digits of a decimal, at most 19 (FORMAT.md, kind 3).
    @inline(__always)
    static func digits(_ value: UInt64) throws(DamageReason) -> Int {
        guard value < 10_000_000_000_000_000_000 else { throw DamageReason("a decimal of 20 digits") }
        var digits = 1
        var power: UInt64 = 10
        while digits < 19, value >= power {
            digits += 1
            power &*= 10
        }
        return digits
    }

    mutating func putDecimal(_ value: UInt64, digits: Int) throws(DamageReason) {
        try reserve(digits)
        var rest = value
        for index in stride(from: count + digits - 1, through: count, by: -1) {
            out[index] = 0x30 + UInt8(rest % 10)
            rest /= 10
        }
        count += digits
    }

    /// Starts a field whose length is known only once it is rebuilt: one byte is kept for the
    /// length, which fits most fields (under 128 bytes), so that only longer ones move.
    @inline(__always)
    mutating func openLength() throws(DamageReason) -> Int {
        try reserve(1)
        count += 1
        return count - 1
    }

    /// Writes the length of the field opened at `start`, moving the field when its length
    /// takes more than the one byte kept.
    mutating func closeLength(_ start: Int) throws(DamageReason) {
        let length = UInt64(count - start - 1)
        let size = length.varintSize
        if size > 1 {
            try reserve(size - 1)
            UnsafeMutableRawPointer(out + start + size).copyMemory(from: out + start + 1, byteCount: Int(length))
            count += size - 1
        }
        writeVarint(length, at: start)
    }
}
