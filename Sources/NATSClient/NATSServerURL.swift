/// One server of a `nats://` URL list, with the credentials and TLS wish it carries.
///
/// Accepted forms: `nats://host:port`, `tls://host:port`, `nats://user:pass@host:port`,
/// `nats://token@host:port`, `host:port`, `host` (port 4222), IPv6 as `[::1]:4222`. Several
/// are separated by commas. The parser is strict: an unknown scheme, a port outside 1…65535, a
/// path or an empty host are errors, because a typo that silently connects elsewhere (or to the
/// default port of someone else's server) is worse than a clear refusal.
public struct NATSServerURL: Hashable, Sendable, CustomStringConvertible {
    public enum Credentials: Hashable, Sendable {
        case none
        case userPassword(user: String, password: String)
        case token(String)
    }

    public var host: String
    public var port: Int
    /// The URL asked for TLS (`tls://`); a server that requires TLS gets it either way.
    public var tlsRequired: Bool
    public var credentials: Credentials

    public static let defaultPort = 4222

    public init(host: String, port: Int = defaultPort, tlsRequired: Bool = false, credentials: Credentials = .none) {
        self.host = host
        self.port = port
        self.tlsRequired = tlsRequired
        self.credentials = credentials
    }

    /// The URL with its credentials hidden, fit for messages and logs.
    public var description: String {
        let scheme = tlsRequired ? "tls" : "nats"
        let secret = credentials == .none ? "" : "***@"
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(secret)\(shownHost):\(port)"
    }

    /// Reads a comma-separated list; at least one URL is required.
    public static func parseList(_ text: String) throws(NATSError) -> [NATSServerURL] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces() }
        guard parts.contains(where: { !$0.isEmpty }) else { throw .invalidURL(text, reason: "no URL given") }
        var urls: [NATSServerURL] = []
        for part in parts {
            guard !part.isEmpty else { throw .invalidURL(text, reason: "an empty entry in the list") }
            urls.append(try parse(part))
        }
        return urls
    }

    public static func parse(_ text: String) throws(NATSError) -> NATSServerURL {
        // Credentials are hidden from the error messages: a URL with a password may end up in a log.
        let shown = redacted(text)
        func fail(_ reason: String) -> NATSError { .invalidURL(shown, reason: reason) }
        var rest = Substring(text)
        var tls = false
        if let range = rest.range(of: "://") {
            let scheme = rest[..<range.lowerBound].lowercased()
            switch scheme {
            case "nats": tls = false
            case "tls": tls = true
            default: throw fail("unknown scheme '\(scheme)' (use nats:// or tls://)")
            }
            rest = rest[range.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("/") || rest.contains("?") || rest.contains("#") {
            throw fail("a NATS URL has no path, query or fragment")
        }
        var credentials = Credentials.none
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                let user = try percentDecoded(userInfo[..<colon], fail)
                let password = try percentDecoded(userInfo[userInfo.index(after: colon)...], fail)
                guard !user.isEmpty else { throw fail("an empty user name") }
                credentials = .userPassword(user: user, password: password)
            } else {
                let token = try percentDecoded(userInfo, fail)
                guard !token.isEmpty else { throw fail("an empty token before '@'") }
                credentials = .token(token)
            }
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw fail("an IPv6 address without ']'") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw fail("no host") }
        guard !host.contains(where: { $0 == " " || $0 == "@" || $0 == ":" && !rest.hasPrefix("[") }) else {
            throw fail("the host '\(host)' is not a host name or address")
        }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), portText.allSatisfy(\.isASCII), (1...65535).contains(number) else {
                throw fail("the port '\(portText)' is not a number from 1 to 65535")
            }
            port = number
        }
        return NATSServerURL(host: String(host), port: port, tlsRequired: tls, credentials: credentials)
    }

    /// The URL as text with anything before '@' replaced.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
        guard start <= at else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }

    private static func percentDecoded(_ text: Substring, _ fail: (String) -> NATSError) throws(NATSError) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                    let value = UInt8(String(decoding: [utf8[first], utf8[utf8.index(after: first)]], as: UTF8.self), radix: 16)
                else { throw fail("a bad percent escape in the credentials") }
                bytes.append(value)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
