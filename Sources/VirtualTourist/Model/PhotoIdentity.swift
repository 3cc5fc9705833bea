/// Which photo a listing's entry is, whatever collection or device listed it: the photo
/// service's id for it and the service, named by the host its images come from (docs/DEVICES.md,
/// "Rules by intent"). Two listings of the same photo from the same service name the same
/// identity; a removed photo's identity is kept on its pin, so that it never comes back.
///
/// ```swift
/// let identity = PhotoIdentity(of: slot.photo)   // ("53012345678", "live.staticflickr.com")
/// identity.key                                   // its 64-bit key, as the state keeps it
/// ```
public struct PhotoIdentity: Hashable, Sendable, CustomStringConvertible {
    public var remoteID: String
    /// The host of the photo's image URL, lowercased ("live.staticflickr.com").
    public var service: String

    public init(remoteID: String, service: String) {
        self.remoteID = remoteID
        self.service = service
    }

    public init(of photo: ListedPhoto) {
        self.init(remoteID: photo.remoteID, service: Self.host(of: photo.url))
    }

    public var description: String { "\(service)/\(remoteID)" }

    /// The identity as the state keeps it: FNV-1a (64 bits) of the service, a zero byte and the
    /// remote id, as UTF-8. Stable across versions and platforms (snapshots keep it); a person's
    /// removals are thousands at most, far from where 64-bit keys collide.
    public var key: UInt64 {
        var service = service
        var remoteID = remoteID
        return service.withUTF8 { service in remoteID.withUTF8 { Self.key(service: UnsafeRawBufferPointer(service), remoteID: UnsafeRawBufferPointer($0)) } }
    }

    /// The key of a service (already lowercase) and a remote id, from their bytes.
    static func key(service: UnsafeRawBufferPointer, remoteID: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in service { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash = (hash ^ 0) &* 0x0000_0100_0000_01b3
        for byte in remoteID { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// The key of the photo whose image URL and remote id these are, from their bytes: the host
    /// lowercased as it is hashed, no string made (a listing's photos are keyed on every replay
    /// of a pin that has removed photos).
    static func key(url: UnsafeRawBufferPointer, remoteID: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for index in hostBounds(url) { hash = (hash ^ UInt64(asciiLowercased(url[index]))) &* 0x0000_0100_0000_01b3 }
        hash = (hash ^ 0) &* 0x0000_0100_0000_01b3
        for byte in remoteID { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// The host of `url`, ASCII letters lowercased: what follows "scheme://" up to the port,
    /// path, query or end, without any user information before an @.
    static func host(of url: String) -> String {
        var url = url
        return url.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            return String(decoding: hostBounds(bytes).map { asciiLowercased(bytes[$0]) }, as: UTF8.self)
        }
    }

    /// Where the host lies in a URL's bytes (empty when there is no "://").
    static func hostBounds(_ url: UnsafeRawBufferPointer) -> Range<Int> {
        var start: Int? = nil
        var index = 0
        while index + 2 < url.count {
            if url[index] == UInt8(ascii: ":"), url[index + 1] == UInt8(ascii: "/"), url[index + 2] == UInt8(ascii: "/") {
                start = index + 3
                break
            }
            index += 1
        }
        guard var low = start else { return 0..<0 }
        var high = low
        while high < url.count, url[high] != UInt8(ascii: "/"), url[high] != UInt8(ascii: "?"), url[high] != UInt8(ascii: "#") { high += 1 }
        if let at = (low..<high).last(where: { url[$0] == UInt8(ascii: "@") }) { low = at + 1 }
        // The port goes; an IPv6 address keeps its brackets and the colons inside them.
        if low < high, url[low] == UInt8(ascii: "["), let close = (low..<high).first(where: { url[$0] == UInt8(ascii: "]") }) {
            return low..<close + 1
        }
        if let colon = (low..<high).first(where: { url[$0] == UInt8(ascii: ":") }) { high = colon }
        return low..<high
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

extension ListedPhoto {
    /// Which photo this is (see ``PhotoIdentity``).
    public var identity: PhotoIdentity { PhotoIdentity(of: self) }

    /// ``PhotoIdentity/key`` of this photo, from its bytes (no string made).
    var identityKey: UInt64 {
        withUTF8(.url) { url in withUTF8(.remoteID) { PhotoIdentity.key(url: url, remoteID: $0) } }
    }
}
