/// Where a visit with `?token=` is sent on to once the web app has set the token's cookie: the
/// same path on this server, and never another site.
public enum HomePath {
    /// The request's path when a browser can only read it as a path of this server; the map
    /// page otherwise. A path a browser could read as another host (`//host`, `/\host`), or
    /// that holds anything but the characters of a path (RFC 3986; a browser drops tabs and
    /// line breaks and turns backslashes into slashes), goes to `/`.
    public static func location(_ path: String) -> String {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), path.utf8.allSatisfy(isPathByte) else { return "/" }
        return path
    }

    private static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "-._~%!$&'()*+,;=:@/".utf8.contains(byte)
        }
    }
}
