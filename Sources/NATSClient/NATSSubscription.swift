import NIOCore

/// The messages of one SUB, in the order the server delivered them. Read them with
/// ``next(timeout:)`` or `for try await`. The sequence ends (nil) after ``unsubscribe(after:)``
/// once the messages already delivered are read, and throws when the connection closes for good.
///
/// Messages wait in memory until read: a reader that falls far behind a busy subject grows the
/// client's memory. JetStream fetches (JetStream+Fetch.swift) are bounded by their batch size.
public struct NATSSubscription: AsyncSequence, Sendable {
    public typealias Element = NATSMessage
    public let subject: String
    public let queue: String?
    public let sid: UInt64
    let connection: NATSConnection

    /// The next message; nil when the subscription ended; `NATSError.timeout` when none came
    /// within `timeout` (nil waits without limit).
    public func next(timeout: Duration? = nil) async throws -> NATSMessage? {
        try await connection.nextMessage(sid: sid, subject: subject, timeout: timeout)
    }

    /// Unsubscribes now, or after `max` messages in all (counting those already delivered).
    public func unsubscribe(after max: Int? = nil) throws {
        try connection.unsubscribe(sid: sid, after: max)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: NATSSubscription
        public mutating func next() async throws -> NATSMessage? { try await subscription.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }
}

/// A subscription as the connection keeps it: the messages not yet read and the reader waiting.
struct SubscriptionEntry: Sendable {
    var subject: String
    var queue: String?
    var messages = CircularBuffer<NATSMessage>()
    var waiter: Waiter?
    /// Messages routed so far, and the limit set by `unsubscribe(after:)`.
    var delivered = 0
    var limit: Int?
    /// No more messages will be routed here (unsubscribed, limit reached, connection closed).
    var ended = false
    /// Why the connection closed, thrown once the buffered messages are read.
    var failure: NATSError?

    struct Waiter: Sendable {
        var id: UInt64
        var continuation: CheckedContinuation<NATSMessage?, Error>
        var timeout: Scheduled<Void>?
    }

    init(subject: String, queue: String?) {
        self.subject = subject
        self.queue = queue
    }

    /// The SUB (and UNSUB with the remaining count) that re-creates this subscription on a new
    /// server after a reconnect.
    func subscribeLines(sid: UInt64) -> String {
        var text = "SUB \(subject)" + (queue.map { " \($0)" } ?? "") + " \(sid)\r\n"
        if let limit { text += "UNSUB \(sid) \(max(limit - delivered, 1))\r\n" }
        return text
    }
}

/// Unique names for inboxes and objects: 22 characters of base 62 from the system's random
/// generator, which is as collision-proof as NATS' own NUIDs (≈131 bits) without their state.
enum NUID {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    static func next() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(decoding: (0..<22).map { _ in alphabet[Int(generator.next(upperBound: UInt8(62)))] }, as: UTF8.self)
    }
}
