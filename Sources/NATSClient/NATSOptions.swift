import Foundation
import NIOSSL

/// How a connection behaves: its timeouts, reconnection and TLS. The defaults suit a cluster on
/// a local network; tests shorten them.
public struct NATSOptions: Sendable {
    /// The client name the server shows in its monitoring pages.
    public var name: String = "virtual-tourist"
    /// How long the first connection may take, over every URL, before `unreachable`.
    public var connectTimeout: Duration = .seconds(5)
    /// How long one server may take to accept the TCP connection and answer the handshake.
    public var attemptTimeout: Duration = .seconds(2)
    /// Whether a lost connection is reestablished (to any server of the cluster).
    public var reconnect: Bool = true
    /// The pause after every server was tried once without success.
    public var reconnectWait: Duration = .milliseconds(250)
    /// How long a lost connection keeps trying before it closes for good; nil: for as long as
    /// it is open (``live``).
    public var maxReconnectTime: Duration? = .seconds(60)
    /// Publishes made while reconnecting are kept, up to this many bytes, and sent once a server
    /// takes the connection; past it a publish fails with `reconnectBufferFull`. Zero fails
    /// every publish made while disconnected.
    public var reconnectBufferLimit: Int = 8 << 20
    /// How often the client pings the server to find a dead connection that TCP has not noticed.
    public var pingInterval: Duration = .seconds(20)
    /// Unanswered pings after which the connection is considered dead.
    public var maxPingsOutstanding: Int = 2
    /// After a request times out, how long the server has to answer a PING before the
    /// connection is taken for dead and remade. A cable pulled out (packets lost, nothing
    /// refused) then shows within a request's timeout and this, not after the periodic pings'
    /// 40–60 s; a server that is alive but slow to reply (JetStream electing a leader) answers
    /// the PING and keeps its connection.
    public var probeTimeout: Duration = .seconds(2)
    /// How long requests may go unanswered on a server that answers PINGs before the client
    /// moves to another server of the cluster: from the sending of the oldest request that timed
    /// out with no reply to any request since. A server can go on answering its clients' PINGs
    /// while the JetStream API behind it stays silent (nats-server 2.9 has been seen to do so
    /// until it was restarted, nats-io/nats-server#4034); another server of the cluster then
    /// answers. Longer than an election takes, so a leader being chosen does not move it. nil:
    /// never; a connection that knows no other server stays.
    public var requestSilenceLimit: Duration? = .seconds(15)
    /// The default timeout of `request` and of the JetStream calls.
    public var requestTimeout: Duration = .seconds(5)
    /// Whether the server sends this connection the messages it publishes itself.
    public var echo: Bool = true
    /// The TLS settings used when the URL is `tls://` or the server requires TLS. The default
    /// verifies the server's certificate against the system's roots.
    public var tls: TLSConfiguration = .makeClientConfiguration()

    public init() {}

    /// The options of a connection that runs until it is closed (a live sync, replication or
    /// follower): a cluster away for longer than a one-off command would wait is tried again
    /// and again, as long as it takes, so the work resumes by itself once it answers.
    public static var live: NATSOptions {
        var options = NATSOptions()
        options.maxReconnectTime = nil
        return options
    }
}

/// The server's INFO: what the client needs of it.
public struct NATSServerInfo: Decodable, Sendable, Equatable {
    public var serverID: String?
    public var serverName: String?
    public var version: String?
    public var maxPayload: Int?
    public var headers: Bool?
    public var tlsRequired: Bool?
    public var tlsAvailable: Bool?
    public var authRequired: Bool?
    /// Other servers of the cluster that clients may use, as `host:port`.
    public var connectURLs: [String]?
    public var jetStream: Bool?
    /// Set when the server is about to shut down (lame duck mode).
    public var lameDuckMode: Bool?

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id", serverName = "server_name", version
        case maxPayload = "max_payload", headers
        case tlsRequired = "tls_required", tlsAvailable = "tls_available"
        case authRequired = "auth_required", connectURLs = "connect_urls"
        case jetStream = "jetstream", lameDuckMode = "ldm"
    }

    static func decode(_ json: [UInt8]) throws(NATSError) -> NATSServerInfo {
        do {
            return try JSONDecoder().decode(NATSServerInfo.self, from: Data(json))
        } catch {
            throw .protocolViolation("an INFO whose JSON does not read: \(error)")
        }
    }
}

/// The CONNECT the client sends: no +OK after every command (verbose false), headers and the
/// 503 no-responders status on, and the credentials from the URL.
struct NATSConnectMessage: Encodable {
    var verbose = false
    var pedantic = false
    var tls_required: Bool
    var name: String
    var lang = "swift"
    var version = "0.1.0"
    var `protocol` = 1
    var headers = true
    var no_responders = true
    var echo: Bool
    var user: String?
    var pass: String?
    var auth_token: String?

    init(url: NATSServerURL, tls: Bool, options: NATSOptions) {
        tls_required = tls
        name = options.name
        echo = options.echo
        switch url.credentials {
        case .none: break
        case .userPassword(let user, let password):
            self.user = user
            self.pass = password
        case .token(let token): auth_token = token
        }
    }

    func line() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings, numbers and booleans cannot fail.
        let json = try! encoder.encode(self)
        return Array("CONNECT ".utf8) + Array(json) + [0x0D, 0x0A]
    }
}

extension Duration {
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    var nanoseconds: Int64 {
        let parts = components
        return parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000
    }
}
