import CZstd
import Crypto
import Foundation

/// The conventions of docs/FORMAT.md ("Conventions"), implemented for the tests' independent
/// readers and dumps from the document alone: nothing here calls the EventLog module's code, so
/// a mistake in the module and the same mistake in the document cannot hide each other. A type
/// that reads or dumps the format conforms, to call these unqualified.
protocol FormatBytes {}

/// The helpers on their own, for tests that need one checksum or field.
enum IndependentBytes: FormatBytes {}

/// A rule of the document that the bytes break.
struct FormatRuleBroken: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension FormatBytes {
    static func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
        if !condition { throw FormatRuleBroken("\(what()) does not hold") }
    }

    /// Little-endian integers at `o`, throwing when the bytes end first.
    static func u8(_ b: [UInt8], _ o: Int) throws -> UInt8 {
        try check(o >= 0 && o < b.count, "a byte at offset \(o) of \(b.count)")
        return b[o]
    }
    static func u16(_ b: [UInt8], _ o: Int) -> UInt16 { UInt16(b[o]) | UInt16(b[o + 1]) << 8 }
    static func u32(_ b: [UInt8], _ o: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[o + $1]) << (8 * UInt32($1)) } }
    static func u64(_ b: [UInt8], _ o: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[o + $1]) << (8 * UInt64($1)) } }
    static func i64(_ b: [UInt8], _ o: Int) -> Int64 { Int64(bitPattern: u64(b, o)) }

    static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// Unsigned LEB128: at most 10 bytes, the value within 64 bits, the bytes within `b`.
    static func varint(_ b: [UInt8], _ position: inout Int, end: Int? = nil) throws -> UInt64 {
        let limit = end ?? b.count
        var value: UInt64 = 0
        for index in 0..<10 {
            try check(position < limit, "a varint that ends before its last byte")
            let byte = b[position]
            position += 1
            let group = UInt64(byte & 0x7F)
            // The tenth byte may carry only the 64th bit.
            try check(index < 9 || group <= 1, "a varint whose value fits in 64 bits")
            value |= group << (7 * UInt64(index))
            if byte < 0x80 { return value }
        }
        throw FormatRuleBroken("a varint of at most 10 bytes does not hold")
    }

    /// Bitwise CRC32C, the slow textbook way, deliberately unlike the module's table version.
    static func crc32c<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    static func hexText<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A zstd payload's content: exactly one frame stating its content size with nothing after
    /// it (format 2), or frames that decompress to `rawLength` together (format 1's rule).
    static func unzstd(_ stored: [UInt8], rawLength: Int?, singleFrame: Bool) throws -> [UInt8] {
        try check(!stored.isEmpty, "a non-empty zstd payload")
        let expected: Int
        if singleFrame {
            let frame = ZSTD_findFrameCompressedSize(stored, stored.count)
            try check(ZSTD_isError(frame) == 0 && frame == stored.count, "a payload of exactly one zstd frame")
            let size = ZSTD_getFrameContentSize(stored, stored.count)
            try check(size < UInt64.max - 1, "a zstd frame that states its content size")
            try check(size <= 64 << 20, "a zstd content of at most 64 MiB")
            try check(rawLength == nil || Int(size) == rawLength, "a zstd content size equal to raw_length")
            expected = Int(size)
        } else {
            expected = rawLength!
        }
        var output = [UInt8](repeating: 0, count: expected)
        let produced = output.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, expected, stored, stored.count) }
        try check(ZSTD_isError(produced) == 0 && produced == expected, "zstd decompressing to exactly \(expected) bytes")
        return output
    }

    /// The version of the linked libzstd, as "1.5.4": the worked example's frames depend on it.
    static var zstdVersion: String { String(cString: ZSTD_versionString()) }

    /// One field of a dump: offset, its bytes in hex (16 a line), and what it means.
    static func field(_ bytes: [UInt8], _ offset: Int, _ count: Int, _ meaning: String) -> String {
        var lines = ""
        var start = offset
        var first = true
        while start < offset + count {
            let stop = min(start + 16, offset + count)
            let hexBytes = bytes[start..<stop].map { String(format: "%02x", $0) }.joined(separator: " ")
            let label = first ? meaning : ""
            lines += String(format: "%04x  ", start) + hexBytes.padding(toLength: 48, withPad: " ", startingAt: 0)
                + (label.isEmpty ? "" : " " + label)
            lines = lines.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
            start = stop
            first = false
        }
        return lines
    }
}
