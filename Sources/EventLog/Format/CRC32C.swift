import CCRC32C

/// CRC32C (Castagnoli), as FORMAT.md's "Conventions" define it.
///
/// ```swift
/// CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283
/// var crc = CRC32C(); crc.update(header); crc.update(payload); crc.value
/// ```
///
/// On the CPU's `crc32` instruction where it has one (SSE4.2, Sources/CCRC32C): replay checks
/// every block and record, and slicing-by-8 in Swift took a third of the read stage
/// (docs/BENCHMARKS.md). Elsewhere, slicing-by-8 in plain Swift: eight bytes per step, no
/// allocation. The tests hold the two to the same answers.
public struct CRC32C: Sendable {
    private var state: UInt32 = 0xFFFF_FFFF

    public init() {}

    /// The checksum of everything given to ``update(_:)-(UnsafeRawBufferPointer)`` so far.
    public var value: UInt32 { state ^ 0xFFFF_FFFF }

    /// Whether the instruction is used (false only on CPUs without it).
    static let usesInstruction = vt_crc32c_available() != 0

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        if CRC32C.usesInstruction, let base = bytes.baseAddress {
            state = vt_crc32c_update(state, base, bytes.count)
        } else {
            updateInSoftware(bytes)
        }
    }

    /// Slicing-by-8, the path for CPUs without the instruction.
    mutating func updateInSoftware(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        var index = 0
        let count = bytes.count
        CRC32C.tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = UInt32(littleEndianBytes: bytes, at: index) ^ crc
                let high = UInt32(littleEndianBytes: bytes, at: index + 4)
                crc = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        state = crc
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public mutating func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    public static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Eight 256-entry tables: table k advances a byte's contribution by k further bytes.
    private static let tables: [UInt32] = {
        let polynomial: UInt32 = 0x82F6_3B78
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()
}
