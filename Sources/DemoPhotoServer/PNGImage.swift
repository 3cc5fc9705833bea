/// Writes real PNG files (8-bit RGB, no interlace) with the image data in stored (uncompressed)
/// deflate blocks: valid for every decoder, and simple enough to write here in full.
///
/// ```swift
/// let png = PNGImage(width: 2, height: 1, pixels: [255, 0, 0,  0, 0, 255]).encoded()
/// png.prefix(8)   // 89 50 4E 47 0D 0A 1A 0A
/// ```
struct PNGImage {
    let width: Int
    let height: Int
    /// Row-major RGB triples: width × height × 3 bytes.
    let pixels: [UInt8]

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3)
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    func encoded() -> [UInt8] {
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(width))
        header.appendBigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // bit depth 8, colour type RGB, deflate, filter 0, no interlace
        var png = Self.signature
        png.appendChunk("IHDR", header)
        png.appendChunk("IDAT", zlibStored(filteredRows()))
        png.appendChunk("IEND", [])
        return png
    }

    /// Each row prefixed with filter type 0 (none).
    private func filteredRows() -> [UInt8] {
        var rows: [UInt8] = []
        rows.reserveCapacity(height * (width * 3 + 1))
        for row in 0..<height {
            rows.append(0)
            rows += pixels[(row * width * 3)..<((row + 1) * width * 3)]
        }
        return rows
    }

    /// A zlib stream of stored blocks (RFC 1950 and RFC 1951 §3.2.4).
    private func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let count = min(65_535, data.count - start)
            let final: UInt8 = start + count == data.count ? 1 : 0
            out.append(final)
            out.append(UInt8(count & 0xFF))
            out.append(UInt8(count >> 8))
            out.append(UInt8(~count & 0xFF))
            out.append(UInt8((~count >> 8) & 0xFF))
            out += data[start..<(start + count)]
            start += count
        } while start < data.count
        out.appendBigEndian(Self.adler32(data))
        return out
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    /// CRC-32 as PNG and zlib use it (polynomial 0xEDB88320, reflected).
    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32<S: Sequence<UInt8>>(_ bytes: S) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

extension [UInt8] {
    mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(value >> 24))
        append(UInt8((value >> 16) & 0xFF))
        append(UInt8((value >> 8) & 0xFF))
        append(UInt8(value & 0xFF))
    }

    mutating func appendChunk(_ type: String, _ data: [UInt8]) {
        appendBigEndian(UInt32(data.count))
        let typeAndData = Array(type.utf8) + data
        self += typeAndData
        appendBigEndian(PNGImage.crc32(typeAndData))
    }
}
