import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One GET over HTTP(S), bounded in time and size, with every failure turned into a
/// ``PhotoSourceError`` that says what happened in words.
struct HTTPFetch: Sendable {
    /// What came back.
    struct Answer: Sendable {
        var status: Int
        var contentType: String?
        /// The `Retry-After` header, when the service sent one (429, Commons' maxlag).
        var retryAfter: String? = nil
        var body: [UInt8]
    }

    /// The whole exchange (connect, TLS, head and body) must finish within this.
    var timeout: Duration
    /// Bodies larger than this are refused.
    var maxBytes: Int
    /// Applied to anything that reaches a message (the request URL may hold a key).
    var redact: @Sendable (String) -> String = { $0 }
    /// What is being fetched, for messages ("the photo search", "the image").
    var what: String
    /// Sent with every request; Wikimedia refuses requests without a descriptive one.
    var userAgent = HTTPFetch.defaultUserAgent

    static let defaultUserAgent = "VirtualTourist/1"

    /// Fetches `url`; `shownURL` is how the URL appears in messages.
    func get(_ url: String, shownURL: String) async throws(PhotoSourceError) -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "Accept-Encoding", value: "identity")
        let limit = maxBytes
        let prepared = request
        let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        var attempt = 0
        while true {
            do {
                // The client's own deadline comes first, so that its more precise errors (the
                // connection refused on every retry) win; this one bounds the body too.
                return try await Self.withDeadline(timeout + .milliseconds(250)) {
                    let response = try await Self.client.execute(prepared, timeout: .nanoseconds(max(1, nanoseconds)))
                    if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                        throw NIOTooManyBytesError(maxBytes: limit)
                    }
                    let buffer = try await response.body.collect(upTo: limit)
                    return Answer(
                        status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"),
                        retryAfter: response.headers.first(name: "Retry-After"), body: Array(buffer.readableBytesView))
                }
            } catch {
                // A server drops a kept-alive connection when it has been idle for its timeout;
                // a request sent on it as it goes is reset unanswered. A GET can be sent again,
                // once, on a new connection (the pool has let the dead one go).
                if attempt == 0 && Self.isDroppedConnection(error) {
                    attempt += 1
                    continue
                }
                throw describe(error, shownURL: shownURL)
            }
        }
    }

    /// Whether `error` says the connection was closed or reset with no answer begun.
    static func isDroppedConnection(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? NIOCore.IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    /// One client for the process, like `HTTPClient.shared`, but failing a connection that
    /// cannot be made (refused, TLS handshake) at once instead of retrying it until the
    /// deadline: the album records the failure and can be retried.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Runs `work`, cancelling it and throwing ``TimedOut`` when it takes longer than `limit`.
    static func withDeadline<T: Sendable>(
        _ limit: Duration, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TimedOut()
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    struct TimedOut: Error {}

    func describe(_ error: any Error, shownURL: String) -> PhotoSourceError {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let timedOut = PhotoSourceError(
            .timeout, "\(what) at \(shownURL) did not answer within \(seconds.compactText) s; try again later")
        switch error {
        case is TimedOut:
            return timedOut
        case is CancellationError:
            return PhotoSourceError(.cancelled, "\(what) was cancelled")
        case is NIOTooManyBytesError:
            return PhotoSourceError(.tooLarge, "\(what) at \(shownURL) is larger than \(maxBytes) bytes")
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .getConnectionFromPoolTimeout:
                return timedOut
            case .tlsHandshakeTimeout:
                return PhotoSourceError(.tls, "the secure connection to \(shownURL) timed out during its handshake")
            case .cancelled:
                return PhotoSourceError(.cancelled, "\(what) was cancelled")
            case .remoteConnectionClosed, .bodyLengthMismatch:
                return PhotoSourceError(
                    .network, "the connection to \(shownURL) closed before the whole answer arrived; try again")
            case .invalidURL, .emptyHost, .emptyScheme:
                return PhotoSourceError(.invalidArgument, "\(shownURL) is not a URL that can be fetched")
            default:
                return PhotoSourceError(.network, "\(what) at \(shownURL) failed: \(redact(String(describing: error)))")
            }
        case let error as HTTPParserError where error == .invalidEOFState:
            return PhotoSourceError(
                .network, "the connection to \(shownURL) closed before the whole answer arrived; try again")
        case let error as NIOSSLError:
            return PhotoSourceError(
                .tls, "the secure connection to \(shownURL) failed (\(redact(String(describing: error)))); check the"
                    + " endpoint's address and certificate")
        case let error as BoringSSLError:
            return PhotoSourceError(.tls, "the secure connection to \(shownURL) failed (\(redact(String(describing: error))))")
        case let error as NIOSSLExtraError:
            return PhotoSourceError(.tls, "the secure connection to \(shownURL) failed (\(redact(String(describing: error))))")
        default:
            return PhotoSourceError(
                .network, "\(what) at \(shownURL) could not be reached (\(redact(String(describing: error)))); check the network")
        }
    }
}

extension Double {
    /// At most three decimals, without trailing zeros: 0.5, 20, 1.25.
    var compactText: String {
        let rounded = (self * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
