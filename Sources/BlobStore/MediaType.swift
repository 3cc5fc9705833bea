/// The kind of bytes, as their first bytes say (never as a server claims).
///
/// ```swift
/// MediaType.sniff([0xFF, 0xD8, 0xFF, 0xE0, …])   // .jpeg
/// MediaType.sniff(Array("<!DOCTYPE html>".utf8))  // nil: an error page is not a photo
/// ```
public enum MediaType: String, Hashable, Sendable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case gif = "image/gif"
    case webp = "image/webp"

    /// The photo formats: what a photo album accepts.
    public static let photos: Set<MediaType> = Set(allCases)

    /// The type the bytes' signature names, or nil when it is none of these.
    public static func sniff<C: Collection>(_ bytes: C) -> MediaType? where C.Element == UInt8 {
        let head = Array(bytes.prefix(12))
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return .webp }
        return nil
    }
}
