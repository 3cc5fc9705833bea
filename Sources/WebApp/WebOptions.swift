import Foundation
import HTTPListening

/// How the web app listens and what its pages use.
public struct WebOptions: Sendable {
    /// The address to bind: loopback by default. Any other address needs ``accessToken``.
    public var host = "127.0.0.1"
    /// 0: any free port (the URL printed names the one chosen).
    public var port = 8080
    /// Required on every request when set (a cookie after the first visit with `?token=`, or an
    /// `Authorization: Bearer` header). Mandatory when ``host`` is not a loopback address.
    public var accessToken: String?
    /// The map's tile URL template (`{z}`, `{x}`, `{y}`, optionally `{s}`); nil: no tiles, a
    /// plain background with a graticule.
    public var tileURL: String? = WebOptions.openStreetMapTiles
    /// Where Leaflet's files are (Debian's libjs-leaflet installs them here).
    public var leafletFolder = WebOptions.debianLeafletFolder
    /// The largest request body accepted.
    public var maxBodyBytes = 16 * 1024
    /// How long a connection may go without a request part arriving, and how many may be
    /// open at once (``ConnectionLimits``: 15 s and 4,096 by default).
    public var connectionLimits = ConnectionLimits()
    /// How often an idle live-update stream sends a comment, so dead connections are noticed.
    public var heartbeat: Duration = .seconds(15)
    /// How the store's replication stands now (GET /api/replication), when it is replicated or
    /// a replica; the program that runs the replication fills it in.
    public var replication: (@Sendable () -> ReplicationView)?
    /// This device's name in a map of several devices, for the pages' headers.
    public var deviceName: String?

    public static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public static let debianLeafletFolder = "/usr/share/javascript/leaflet"

    public init() {}

    /// Why these options cannot be used, or nil.
    public var problem: String? {
        if !(0...65_535).contains(port) { return "port \(port) is outside 0…65535" }
        if host.isEmpty { return "the address to listen on is empty" }
        if let token = accessToken {
            if token.utf8.count < 16 { return "the access token must be at least 16 characters" }
            if !token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") }) {
                return "the access token may hold only printable ASCII without spaces, ';' or ','"
            }
        } else if !isLoopback {
            return "listening on \(host) (not loopback) needs an access token (--token or VT_TOKEN)"
        }
        if let tiles = tileURL {
            guard tiles.hasPrefix("https://") || tiles.hasPrefix("http://") else {
                return "the tile URL must start with http:// or https:// (got \(tiles))"
            }
            for part in ["{z}", "{x}", "{y}"] where !tiles.contains(part) {
                return "the tile URL must contain \(part) (got \(tiles))"
            }
        }
        if !(1024...(1 << 20)).contains(maxBodyBytes) { return "the body limit must be 1 KiB to 1 MiB" }
        return connectionLimits.problem
    }

    /// Loopback addresses: 127.0.0.0/8, ::1 and localhost.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// What is missing for Leaflet, or nil when its files are where they are expected.
    public var leafletProblem: String? {
        for file in ["leaflet.js", "leaflet.css"] where !FileManager.default.fileExists(atPath: leafletFolder + "/" + file) {
            return "Leaflet (the map library) is not at \(leafletFolder): install it with 'apt-get install libjs-leaflet', or point --leaflet (VT_LEAFLET) at a folder holding leaflet.js and leaflet.css"
        }
        return nil
    }
}
