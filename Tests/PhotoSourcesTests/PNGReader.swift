/// An independent reader of the demo server's PNGs, written from the PNG and zlib
/// specifications (bitwise CRC-32, Adler-32, stored deflate blocks only), so the tests check
/// the bytes rather than trust the encoder.
struct PNGReader {
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    var width = 0
    var height = 0
    var pixels: [UInt8] = []

    init(_ bytes: [UInt8]) throws {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw Invalid(description: "no signature") }
        var at = 8
        var data: [UInt8] = []
        var ended = false
        while at < bytes.count {
            guard at + 12 <= bytes.count else { throw Invalid(description: "chunk header cut") }
            let length = Int(Self.u32(bytes, at))
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            guard at + 12 + length <= bytes.count else { throw Invalid(description: "chunk \(type) cut") }
            let body = Array(bytes[(at + 8)..<(at + 8 + length)])
            guard Self.crc(Array(bytes[(at + 4)..<(at + 8)]) + body) == Self.u32(bytes, at + 8 + length) else {
                throw Invalid(description: "bad CRC in \(type)")
            }
            switch type {
            case "IHDR":
                width = Int(Self.u32(body, 0))
                height = Int(Self.u32(body, 4))
                guard body[8] == 8, body[9] == 2 else { throw Invalid(description: "not 8-bit RGB") }
            case "IDAT": data += body
            case "IEND": ended = true
            default: break
            }
            at += 12 + length
        }
        guard ended else { throw Invalid(description: "no IEND") }
        let raw = try Self.inflateStored(data)
        let stride = width * 3 + 1
        guard raw.count == stride * height else { throw Invalid(description: "\(raw.count) bytes of rows, not \(stride * height)") }
        for row in 0..<height {
            guard raw[row * stride] == 0 else { throw Invalid(description: "filter other than none") }
            pixels += raw[(row * stride + 1)..<((row + 1) * stride)]
        }
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = (c >> 1) ^ (c & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return ~c
    }

    static func inflateStored(_ zlib: [UInt8]) throws -> [UInt8] {
        guard zlib.count >= 6, zlib[0] & 0x0F == 8, (UInt16(zlib[0]) << 8 | UInt16(zlib[1])) % 31 == 0 else {
            throw Invalid(description: "bad zlib header")
        }
        var at = 2
        var out: [UInt8] = []
        var final = false
        while !final {
            let header = zlib[at]
            final = header & 1 == 1
            guard (header >> 1) & 3 == 0 else { throw Invalid(description: "only stored blocks are read here") }
            let length = Int(zlib[at + 1]) | Int(zlib[at + 2]) << 8
            let complement = Int(zlib[at + 3]) | Int(zlib[at + 4]) << 8
            guard length == ~complement & 0xFFFF else { throw Invalid(description: "LEN and NLEN disagree") }
            out += zlib[(at + 5)..<(at + 5 + length)]
            at += 5 + length
        }
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in out {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        guard u32(zlib, at) == b << 16 | a else { throw Invalid(description: "bad Adler-32") }
        return out
    }
}
