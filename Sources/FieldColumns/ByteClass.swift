import EventLog
/// Byte classes for the text checks: a table lookup instead of comparisons on every byte.
enum ByteClass {
    static let letter: UInt8 = 0x01
    static let hex: UInt8 = 0x02
    static let table: [UInt8] = (0...255).map { byte -> UInt8 in
        if (0x30...0x39).contains(byte) { return hex }
        if (0x61...0x66).contains(byte) { return hex | letter }
        return 0
    }
}

extension ByteClass {
    /// Whether any byte is below 0x20, eight at a time: a nested message's bytes are checked
    /// once for each message around them. (A byte below 0x20 sets its top bit in
    /// `word - 0x2020…` only where its own top bit was clear.)
    static func hasControlByte(_ field: UnsafeRawBufferPointer) -> Bool {
        guard let base = field.baseAddress else { return false }
        let count = field.count
        var position = 0
        while position + 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            if (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            position += 8
        }
        while position < count {
            if base.load(fromByteOffset: position, as: UInt8.self) < 0x20 { return true }
            position += 1
        }
        return false
    }
}
