/// Everything the client reports, one case per thing a caller may want to react to differently.
/// The description says what happened in words a person can act on; it never holds a password
/// or a token (URLs are shown with their credentials replaced by `***`).
public enum NATSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The URL list could not be read: which URL, and why.
    case invalidURL(String, reason: String)
    /// No server answered within the time allowed: the URLs tried and the last failure.
    case unreachable(urls: [String], lastError: String)
    /// The server refused the credentials (`-ERR 'Authorization Violation'`). Trying again with
    /// the same credentials cannot help, so the client never reconnects after it.
    case authorizationViolation(server: String)
    /// The server demands TLS and the URL did not allow it, or the TLS handshake failed.
    case tls(String)
    /// The server sent `-ERR`; the connection is closed by the server after most of them.
    case serverError(String)
    /// The server sent bytes that are not the NATS protocol (or past the limits).
    case protocolViolation(String)
    /// A request found no subscriber on its subject (status 503).
    case noResponders(subject: String)
    /// A request had no reply within its timeout.
    case timeout(subject: String, seconds: Double)
    /// The connection was closed by `close()`, or gave up reconnecting.
    case connectionClosed
    /// The connection was lost while the operation waited for the server.
    case connectionLost(String)
    /// A publish while reconnecting found the reconnect buffer full.
    case reconnectBufferFull(limit: Int)
    /// A payload (with its headers) is larger than the server's `max_payload`.
    case payloadTooLarge(size: Int, limit: Int)
    /// A subject, queue group or header a caller passed cannot be sent as is.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): "invalid NATS URL '\(url)': \(reason)"
        case .unreachable(let urls, let last):
            "no NATS server reachable at \(urls.joined(separator: ", ")) (last error: \(last))"
        case .authorizationViolation(let server):
            "the NATS server at \(server) refused the credentials (Authorization Violation)"
        case .tls(let reason): "TLS: \(reason)"
        case .serverError(let text): "the NATS server reported an error: \(text)"
        case .protocolViolation(let text): "NATS protocol violation: \(text)"
        case .noResponders(let subject): "no responders on '\(subject)'"
        case .timeout(let subject, let seconds): "no reply on '\(subject)' within \(seconds) s"
        case .connectionClosed: "the NATS connection is closed"
        case .connectionLost(let why): "the NATS connection was lost: \(why)"
        case .reconnectBufferFull(let limit):
            "the connection is reconnecting and its buffer of \(limit) bytes of publishes is full"
        case .payloadTooLarge(let size, let limit):
            "a message of \(size) bytes is larger than the server's max_payload of \(limit) bytes"
        case .invalidArgument(let text): text
        }
    }
}

/// Subjects and queue groups travel inside a space-separated control line, so a space, tab,
/// or line break in one would split the line and desynchronise the whole connection.
func validateToken(_ value: String, what: String, allowWildcards: Bool = true) throws(NATSError) {
    guard !value.isEmpty else { throw .invalidArgument("the \(what) is empty") }
    // One pass over the bytes, on every publish (String.contains(String) would go through
    // NSString). An empty token is reported after white space and wildcards, as before.
    let dot = UInt8(ascii: ".")
    var previous = dot  // a leading '.' is an empty first token
    var emptyToken = false
    for byte in value.utf8 {
        if byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A || byte == 0 {
            throw .invalidArgument("the \(what) '\(value)' contains white space or a control character")
        }
        if !allowWildcards && (byte == UInt8(ascii: "*") || byte == UInt8(ascii: ">")) {
            throw .invalidArgument("the \(what) '\(value)' contains a wildcard")
        }
        if byte == dot && previous == dot { emptyToken = true }
        previous = byte
    }
    if emptyToken || previous == dot {
        throw .invalidArgument("the \(what) '\(value)' has an empty token")
    }
}
