/// Why the photo service could not give what was asked. Messages are written for people and
/// never hold the API key.
///
/// ```swift
/// do { _ = try await flickr.search(near: place, page: 1, perPage: 21) }
/// catch let error as PhotoSourceError where error.code == .invalidKey { … }
/// ```
public struct PhotoSourceError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The service refused the API key (Flickr's code 100).
        public static let invalidKey = Code("invalid-key")
        /// The service said it is unavailable (Flickr's code 105, or an HTTP 5xx).
        public static let serviceUnavailable = Code("service-unavailable")
        /// The service answered `"stat": "fail"` for another reason.
        public static let refused = Code("refused")
        /// The answer was not JSON, or was JSON of an unexpected shape.
        public static let badResponse = Code("bad-response")
        /// An HTTP status other than 200 (and not a 5xx).
        public static let httpStatus = Code("http-status")
        /// No answer within the time allowed.
        public static let timeout = Code("timeout")
        /// The secure connection could not be set up (certificate, protocol).
        public static let tls = Code("tls")
        /// The connection could not be made or broke off.
        public static let network = Code("network")
        /// An image larger than allowed.
        public static let tooLarge = Code("too-large")
        /// A value out of range (a coordinate, a page, a URL) before anything was sent.
        public static let invalidArgument = Code("invalid-argument")
        /// No key is configured, or the configuration is unreadable.
        public static let configuration = Code("configuration")
        /// The work was cancelled.
        public static let cancelled = Code("cancelled")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether trying again later may succeed (the album stays retryable either way).
    public var isTransient: Bool {
        [.serviceUnavailable, .timeout, .network, .httpStatus].contains(code)
    }

    public var description: String { message }
}
