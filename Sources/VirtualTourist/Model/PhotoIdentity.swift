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
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        for byte in service.utf8 { add(byte) }
        add(0)
        for byte in remoteID.utf8 { add(byte) }
        return hash
    }

    /// The host of `url`, lowercased: what follows "scheme://" up to the port, path, query or end.
    static func host(of url: String) -> String {
        let utf8 = url.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
            utf8[colon...].starts(with: "://".utf8)
        else { return "" }
        let start = utf8.index(colon, offsetBy: 3)
        var rest = utf8[start...]
        if let at = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            rest = rest[..<at]
        }
        // User information before an @ is not the host.
        if let at = rest.lastIndex(of: UInt8(ascii: "@")) { rest = rest[rest.index(after: at)...] }
        // The port goes; an IPv6 address keeps its brackets and the colons inside them.
        if rest.first == UInt8(ascii: "["), let close = rest.firstIndex(of: UInt8(ascii: "]")) {
            rest = rest[...close]
        } else if let port = rest.firstIndex(of: UInt8(ascii: ":")) {
            rest = rest[..<port]
        }
        return String(decoding: rest, as: UTF8.self).lowercased()
    }
}

extension ListedPhoto {
    /// Which photo this is (see ``PhotoIdentity``).
    public var identity: PhotoIdentity { PhotoIdentity(of: self) }
}
