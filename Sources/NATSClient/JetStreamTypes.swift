/// A stream's configuration, with the fields this project sets; the others keep the server's
/// defaults (and are not sent, so that a later server's new defaults apply).
public struct StreamConfig: Codable, Equatable, Sendable {
    public enum Storage: String, Codable, Sendable { case file, memory }

    public var name: String
    public var subjects: [String]
    public var storage: Storage
    public var replicas: Int
    /// Refuse deleting single messages (`STREAM.MSG.DELETE`).
    public var denyDelete: Bool
    /// Refuse purging the stream.
    public var denyPurge: Bool
    /// How long message ids are remembered for de-duplication, in nanoseconds (nil: the server's
    /// two minutes).
    public var duplicateWindowNanoseconds: Int64?
    /// Allow `Nats-Rollup` headers (the Object Store needs them).
    public var allowRollup: Bool?
    /// `new` refuses publishes past a limit instead of dropping old messages.
    public var discard: String?

    public init(
        name: String, subjects: [String], storage: Storage = .file, replicas: Int = 1, denyDelete: Bool = false,
        denyPurge: Bool = false, duplicateWindow: Duration? = nil, allowRollup: Bool? = nil, discard: String? = nil
    ) {
        self.name = name
        self.subjects = subjects
        self.storage = storage
        self.replicas = replicas
        self.denyDelete = denyDelete
        self.denyPurge = denyPurge
        self.duplicateWindowNanoseconds = duplicateWindow.map { $0.nanoseconds }
        self.allowRollup = allowRollup
        self.discard = discard
    }

    enum CodingKeys: String, CodingKey {
        case name, subjects, storage, replicas = "num_replicas", denyDelete = "deny_delete", denyPurge = "deny_purge"
        case duplicateWindowNanoseconds = "duplicate_window", allowRollup = "allow_rollup_hdrs", discard
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        subjects = try container.decodeIfPresent([String].self, forKey: .subjects) ?? []
        storage = try container.decodeIfPresent(Storage.self, forKey: .storage) ?? .file
        replicas = try container.decodeIfPresent(Int.self, forKey: .replicas) ?? 1
        denyDelete = try container.decodeIfPresent(Bool.self, forKey: .denyDelete) ?? false
        denyPurge = try container.decodeIfPresent(Bool.self, forKey: .denyPurge) ?? false
        duplicateWindowNanoseconds = try container.decodeIfPresent(Int64.self, forKey: .duplicateWindowNanoseconds)
        allowRollup = try container.decodeIfPresent(Bool.self, forKey: .allowRollup)
        discard = try container.decodeIfPresent(String.self, forKey: .discard)
    }
}

/// A stream's configuration and state, as STREAM.CREATE and STREAM.INFO answer.
public struct StreamInfo: Decodable, Equatable, Sendable {
    public var config: StreamConfig
    public var state: StreamState
    public var cluster: ClusterInfo?
    /// When the stream was made (RFC 3339, as the server says it): a stream of the same name
    /// made again (deleted, or lost with the cluster's storage) has another.
    public var created: String?

    public struct StreamState: Decodable, Equatable, Sendable {
        public var messages: UInt64
        public var bytes: UInt64
        public var firstSequence: UInt64
        public var lastSequence: UInt64
        /// Consumers on the stream (nil from a server that does not say).
        public var consumers: Int?

        enum CodingKeys: String, CodingKey {
            case messages, bytes, firstSequence = "first_seq", lastSequence = "last_seq", consumers = "consumer_count"
        }
    }

    public struct ClusterInfo: Decodable, Equatable, Sendable {
        public var name: String?
        /// The server that leads the stream's Raft group.
        public var leader: String?
        public var replicas: [Peer]?

        public struct Peer: Decodable, Equatable, Sendable {
            public var name: String
            public var current: Bool
        }
    }
}

/// A message fetched through a consumer, with what its reply subject tells about it.
public struct JetStreamMessage: Equatable, Sendable {
    public var subject: String
    public var headers: NATSHeaders?
    public var payload: [UInt8]
    /// The message's sequence in the stream.
    public var streamSequence: UInt64
    /// Its sequence among the consumer's deliveries.
    public var consumerSequence: UInt64
    /// How many times it was delivered (more than 1 after an unacknowledged delivery).
    public var deliveries: UInt64
    /// Messages left for the consumer after this one.
    public var pending: UInt64
    /// The `$JS.ACK…` subject to acknowledge it on (for `ack_policy` explicit).
    public var ackSubject: String

    /// Reads `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`
    /// (nats-server 2.9) or the longer form with a domain and an account hash in front.
    init(_ message: NATSMessage) throws {
        guard let reply = message.replyTo else {
            throw NATSError.protocolViolation("a consumer delivered a message on '\(message.subject)' without a reply subject")
        }
        let tokens = reply.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else {
            throw NATSError.protocolViolation("a consumer's reply subject '\(reply)' is not $JS.ACK metadata")
        }
        let numbers = tokens.count == 9 ? tokens[4...8] : tokens[6...10]
        let values = numbers.map { UInt64($0) }
        guard tokens.count == 9 || tokens.count >= 11, values.allSatisfy({ $0 != nil }) else {
            throw NATSError.protocolViolation("a consumer's reply subject '\(reply)' has bad numbers")
        }
        subject = message.subject
        headers = message.headers
        payload = message.payload
        deliveries = values[0]!
        streamSequence = values[1]!
        consumerSequence = values[2]!
        pending = values[4]!
        ackSubject = reply
    }
}
