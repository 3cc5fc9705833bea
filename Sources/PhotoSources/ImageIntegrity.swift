/// Whether downloaded image bytes end where their format says they end. An HTTP answer that
/// was cut short but framed as complete (a proxy, a truncated file on the server) would
/// otherwise be stored as a broken photo.
public enum ImageIntegrity {
    static let pngEnd: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    /// Why the image is incomplete, or nil when it looks whole (or is of a kind not checked
    /// here; the blob store refuses what is not an image at all). O(1).
    public static func problem(with bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            return bytes.count >= 20 && bytes.suffix(12).elementsEqual(pngEnd) ? nil : "the PNG image ends before its IEND chunk"
        }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            // Some encoders pad after the end marker; look for it near the end.
            let tail = bytes.suffix(64)
            let ended = zip(tail, tail.dropFirst()).contains { $0 == 0xFF && $1 == 0xD9 }
            return ended ? nil : "the JPEG image ends before its end-of-image marker"
        }
        if bytes.starts(with: Array("GIF8".utf8)) {
            return bytes.last == 0x3B ? nil : "the GIF image ends before its trailer"
        }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), bytes[8..<12].elementsEqual("WEBP".utf8) {
            let declared = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
            return declared + 8 <= bytes.count ? nil : "the WebP image is shorter than its header says"
        }
        return nil
    }
}
