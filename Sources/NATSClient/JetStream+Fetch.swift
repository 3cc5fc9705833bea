import Foundation

/// A pull consumer on a stream: the client asks for batches (`CONSUMER.MSG.NEXT`) instead of the
/// server pushing, so a reader that falls behind holds at most one batch in memory.
public struct PullConsumer: Sendable {
    public let jetStream: JetStream
    public let stream: String
    public let name: String

    public enum DeliverFrom: Sendable, Equatable {
        case all
        case sequence(UInt64)
        /// The newest message of each subject the filter matches (JetStream's
        /// `last_per_subject`; needs a filter subject).
        case lastPerSubject
    }

    public enum AckPolicy: String, Sendable { case none, explicit }

    /// The next messages, at most `batch`, in stream order. Waits up to `expires` for the batch to
    /// fill; with `noWait` returns at once with what is there. Ends early on the server's status
    /// 404 (no messages), 408 (the request expired) or 409 (e.g. the consumer was deleted);
    /// skips 100 (idle heartbeat). Throws `NATSError.timeout` when nothing at all came within
    /// `margin` (default: the JetStream timeout) after `expires`: a consumer that is gone (it
    /// goes with its stream) is not answered for.
    public func next(
        batch: Int, expires: Duration = .seconds(2), noWait: Bool = false, margin: Duration? = nil
    ) async throws -> [JetStreamMessage] {
        guard batch > 0 else { throw NATSError.invalidArgument("a fetch batch must be positive, not \(batch)") }
        struct Next: Encodable {
            var batch: Int
            var expires: Int64?
            var no_wait: Bool?
        }
        let connection = jetStream.connection
        let inbox = connection.newInbox()
        let subscription = try connection.subscribe(inbox)
        defer { try? subscription.unsubscribe() }
        let request = Next(batch: batch, expires: noWait ? nil : expires.nanoseconds, no_wait: noWait ? true : nil)
        try connection.publish(
            "\(jetStream.prefix).CONSUMER.MSG.NEXT.\(stream).\(name)",
            payload: Array(try JSONEncoder().encode(request)), replyTo: inbox)
        var messages: [JetStreamMessage] = []
        // The server ends the request at `expires`; the margin covers a slow machine.
        let deadline = ContinuousClock.now + (noWait ? jetStream.timeout : expires + (margin ?? jetStream.timeout))
        while messages.count < batch {
            let remaining = deadline - .now
            guard remaining > .zero, let message = try await subscription.next(timeout: remaining) else { break }
            switch message.status {
            case nil: messages.append(try JetStreamMessage(message))
            case 100: continue
            default: return messages
            }
        }
        return messages
    }

    /// Acknowledges a message (for `AckPolicy.explicit`).
    public func ack(_ message: JetStreamMessage) throws {
        try jetStream.connection.publish(message.ackSubject, payload: Array("+ACK".utf8))
    }

    /// Whether the server still has the consumer: a consumer goes with its stream, and a fetch
    /// from one that is gone only waits out its expiry.
    public func exists() async throws -> Bool {
        struct Info: Decodable { var name: String }
        do {
            let _: Info = try await jetStream.api("CONSUMER.INFO.\(stream).\(name)", body: nil as JetStream.Empty?)
            return true
        } catch let error as JetStreamAPIError
            where error.errorCode == JetStreamAPIError.consumerNotFound || error.errorCode == JetStreamAPIError.streamNotFound
        {
            return false
        }
    }

    /// Where the consumer stands: the last stream message it handed over (its start less one
    /// before the first fetch) and how many messages of the stream it has still to hand over.
    public struct Position: Decodable, Equatable, Sendable {
        public var lastDelivered: UInt64
        public var pending: UInt64
        public init(lastDelivered: UInt64, pending: UInt64) {
            self.lastDelivered = lastDelivered
            self.pending = pending
        }
        enum CodingKeys: String, CodingKey { case delivered, num_pending }
        struct Delivered: Decodable { var stream_seq: UInt64 }
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            lastDelivered = try container.decode(Delivered.self, forKey: .delivered).stream_seq
            pending = try container.decodeIfPresent(UInt64.self, forKey: .num_pending) ?? 0
        }
    }

    /// The consumer's ``Position`` as the server reports it (`CONSUMER.INFO`).
    public func position() async throws -> Position {
        try await jetStream.api("CONSUMER.INFO.\(stream).\(name)", body: nil as JetStream.Empty?)
    }

    /// Deletes the consumer (ephemeral ones also go by themselves once idle).
    public func delete() async throws {
        let _: JetStream.Success = try await jetStream.api("CONSUMER.DELETE.\(stream).\(name)", body: nil as JetStream.Empty?)
    }
}

extension JetStream {
    /// Creates a pull consumer on `stream` starting at `from`. With `durable` nil it is ephemeral:
    /// the server names it and removes it after `inactiveThreshold` without requests. A durable
    /// one keeps its place across connections; creating it again with the same configuration
    /// returns it as it is. With `AckPolicy.explicit`, a message not acknowledged within
    /// `ackWait` (the server's default: 30 s) is handed over again.
    public func pullConsumer(
        stream: String, from start: PullConsumer.DeliverFrom = .all, durable: String? = nil,
        filterSubject: String? = nil, ackPolicy: PullConsumer.AckPolicy = .none,
        inactiveThreshold: Duration = .seconds(30), ackWait: Duration? = nil
    ) async throws -> PullConsumer {
        struct Config: Encodable {
            var durable_name: String?
            var deliver_policy: String
            var opt_start_seq: UInt64?
            var ack_policy: String
            var ack_wait: Int64?
            var filter_subject: String?
            var inactive_threshold: Int64?
            var max_ack_pending: Int?
            var num_replicas: Int?
            var mem_storage: Bool?
        }
        struct Create: Encodable {
            var stream_name: String
            var config: Config
        }
        struct Created: Decodable { var name: String }
        try validateName(stream, what: "stream name")
        if let durable { try validateName(durable, what: "consumer name") }
        if let filterSubject { try validateToken(filterSubject, what: "filter subject") }
        var config = Config(
            durable_name: durable, deliver_policy: "all", ack_policy: ackPolicy.rawValue,
            ack_wait: ackWait?.nanoseconds, filter_subject: filterSubject,
            inactive_threshold: durable == nil ? inactiveThreshold.nanoseconds : nil,
            num_replicas: durable == nil ? 1 : nil, mem_storage: durable == nil ? true : nil)
        switch start {
        case .all: break
        case .sequence(let sequence):
            guard sequence > 0 else { throw NATSError.invalidArgument("stream sequences start at 1") }
            config.deliver_policy = "by_start_sequence"
            config.opt_start_seq = sequence
        case .lastPerSubject:
            guard filterSubject != nil else { throw NATSError.invalidArgument("the last message per subject needs a filter subject") }
            config.deliver_policy = "last_per_subject"
        }
        let operation = durable.map { "CONSUMER.DURABLE.CREATE.\(stream).\($0)" } ?? "CONSUMER.CREATE.\(stream)"
        let created: Created = try await api(operation, body: Create(stream_name: stream, config: config))
        return PullConsumer(jetStream: self, stream: stream, name: created.name)
    }

    /// Up to `batch` messages of `stream` from sequence `start` on, through an ephemeral
    /// consumer made for the call and deleted after it.
    public func fetch(
        stream: String, from start: UInt64, batch: Int, filterSubject: String? = nil, expires: Duration = .seconds(2)
    ) async throws -> [JetStreamMessage] {
        let consumer = try await pullConsumer(stream: stream, from: .sequence(start), filterSubject: filterSubject)
        let messages = try await consumer.next(batch: batch, expires: expires)
        try? await consumer.delete()
        return messages
    }
}
