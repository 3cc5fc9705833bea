import Foundation

/// JetStream over a connection: its API is JSON on request/reply subjects under `$JS.API.`.
/// This covers what replicating a log needs: streams, publishing with de-duplication and the
/// expected-last-sequence check, reading one message, and pull consumers (JetStream+Fetch.swift).
///
/// ```swift
/// let js = JetStream(connection)
/// _ = try await js.createStream(StreamConfig(name: "EVENTS", subjects: ["events.>"], replicas: 3))
/// let ack = try await js.publish("events.s1", payload: bytes, messageID: "e-1", expectedLastSequence: 0)
/// ```
public struct JetStream: Sendable {
    public let connection: NATSConnection
    /// The API prefix (`$JS.API`; another for a JetStream domain).
    public let prefix: String
    public let timeout: Duration

    public init(_ connection: NATSConnection, prefix: String = "$JS.API", timeout: Duration? = nil) {
        self.connection = connection
        self.prefix = prefix
        self.timeout = timeout ?? connection.options.requestTimeout
    }

    // MARK: Streams

    /// Creates the stream; the server answers with the existing stream when one of that name
    /// has the same configuration, and with error 10058 when it differs.
    public func createStream(_ config: StreamConfig) async throws -> StreamInfo {
        try validateName(config.name, what: "stream name")
        return try await api("STREAM.CREATE.\(config.name)", body: config)
    }

    /// The stream's configuration and state; `JetStreamAPIError` 10059 when there is none.
    public func streamInfo(_ name: String) async throws -> StreamInfo {
        try validateName(name, what: "stream name")
        return try await api("STREAM.INFO.\(name)", body: nil as Empty?)
    }

    /// The stream of that name as it is, or a new one with `config` when there is none.
    public func createOrLookUpStream(_ config: StreamConfig) async throws -> StreamInfo {
        do {
            return try await streamInfo(config.name)
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            return try await createStream(config)
        }
    }

    public func deleteStream(_ name: String) async throws {
        try validateName(name, what: "stream name")
        let _: Success = try await api("STREAM.DELETE.\(name)", body: nil as Empty?)
    }

    /// Removes the messages of `subject` (all messages when nil); returns how many went.
    @discardableResult
    public func purgeStream(_ name: String, subject: String? = nil) async throws -> UInt64 {
        struct Purge: Encodable { var filter: String? }
        struct Purged: Decodable { var purged: UInt64 }
        try validateName(name, what: "stream name")
        let result: Purged = try await api("STREAM.PURGE.\(name)", body: Purge(filter: subject))
        return result.purged
    }

    // MARK: Publishing

    /// Publishes into the stream that captures `subject` and waits for its acknowledgement.
    ///
    /// `messageID` (header `Nats-Msg-Id`) makes a retry within the stream's duplicate window
    /// harmless: the server stores the message once and answers the retry with `duplicate`.
    /// `expectedLastSequence` (header `Nats-Expected-Last-Sequence`) makes the publish fail with
    /// error 10071 unless the stream's last message has that sequence, which fences off a second
    /// writer. Throws `NATSError.noResponders` when no stream captures `subject`.
    public func publish(
        _ subject: String, payload: [UInt8], messageID: String? = nil, expectedLastSequence: UInt64? = nil,
        headers: NATSHeaders? = nil
    ) async throws -> PubAck {
        var headers = headers ?? NATSHeaders()
        if let messageID { try headers.set("Nats-Msg-Id", messageID) }
        if let expectedLastSequence { try headers.set("Nats-Expected-Last-Sequence", String(expectedLastSequence)) }
        let reply = try await connection.request(
            subject, payload: payload, headers: headers.fields.isEmpty ? nil : headers, timeout: timeout)
        return try Self.decode(PubAck.self, from: reply.payload, what: "the acknowledgement of a publish to '\(subject)'")
    }

    // MARK: Reading one message

    /// The stored message with sequence `sequence`; error 10037 when there is none.
    public func message(stream: String, sequence: UInt64) async throws -> StoredMessage {
        try await getMessage(stream: stream, request: MessageGet(seq: sequence))
    }

    /// The last message stored on `subject`; error 10037 when there is none.
    public func lastMessage(stream: String, subject: String) async throws -> StoredMessage {
        try await getMessage(stream: stream, request: MessageGet(last_by_subj: subject))
    }

    /// The first message stored on `subject` at or after `sequence`; error 10037 when there is
    /// none. One request to the stream's leader, no consumer: it works as soon as the stream has
    /// a leader again after a server is lost, when creating a consumer may still wait for the
    /// cluster to notice.
    public func nextMessage(stream: String, subject: String, from sequence: UInt64) async throws -> StoredMessage {
        try await getMessage(stream: stream, request: MessageGet(seq: sequence, next_by_subj: subject))
    }

    private struct MessageGet: Encodable {
        var seq: UInt64?
        var last_by_subj: String?
        var next_by_subj: String?
    }

    private func getMessage(stream: String, request: MessageGet) async throws -> StoredMessage {
        struct Reply: Decodable { var message: StoredMessage.Raw }
        try validateName(stream, what: "stream name")
        let reply: Reply = try await api("STREAM.MSG.GET.\(stream)", body: request)
        return try StoredMessage(reply.message)
    }

    // MARK: The API call

    struct Empty: Codable {}
    /// Every API answer may be an error instead of what was asked for.
    struct ErrorEnvelope: Decodable { var error: JetStreamAPIError? }
    struct Success: Decodable { var success: Bool? }

    /// One API request: JSON in, JSON or a typed `JetStreamAPIError` out.
    func api<Body: Encodable, Answer: Decodable>(_ operation: String, body: Body?) async throws -> Answer {
        let payload = try body.map { Array(try JSONEncoder().encode($0)) } ?? []
        let subject = "\(prefix).\(operation)"
        let reply = try await connection.request(subject, payload: payload, timeout: timeout)
        return try Self.decode(Answer.self, from: reply.payload, what: "the answer to \(subject)")
    }

    static func decode<Answer: Decodable>(_ type: Answer.Type, from payload: [UInt8], what: String) throws -> Answer {
        let data = Data(payload)
        let decoder = JSONDecoder()
        if let envelope = try? decoder.decode(ErrorEnvelope.self, from: data), let error = envelope.error { throw error }
        do {
            return try decoder.decode(Answer.self, from: data)
        } catch {
            let shown = String(decoding: payload.prefix(200), as: UTF8.self)
            throw NATSError.protocolViolation("\(what) does not read (\(error)): \(shown)")
        }
    }

    /// Stream and consumer names become subject tokens, so they may not hold '.', wildcards or
    /// white space.
    func validateName(_ name: String, what: String) throws(NATSError) {
        try validateToken(name, what: what, allowWildcards: false)
        if name.utf8.contains(UInt8(ascii: ".")) { throw .invalidArgument("the \(what) '\(name)' contains '.'") }
    }
}

/// An error the JetStream API answered with. `errorCode` is the stable number to test for.
public struct JetStreamAPIError: Error, Equatable, Sendable, Decodable, CustomStringConvertible {
    /// The HTTP-like status (400, 404, 503…).
    public var code: Int
    /// JetStream's own code, e.g. 10071 for a wrong last sequence.
    public var errorCode: Int
    public var errorDescription: String

    public static let wrongLastSequence = 10071
    public static let streamNotFound = 10059
    public static let streamNameInUse = 10058
    public static let noMessageFound = 10037
    public static let consumerNotFound = 10014

    public init(code: Int, errorCode: Int, description: String) {
        self.code = code
        self.errorCode = errorCode
        self.errorDescription = description
    }

    enum CodingKeys: String, CodingKey { case code, errorCode = "err_code", errorDescription = "description" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decodeIfPresent(Int.self, forKey: .code) ?? 0
        errorCode = try container.decodeIfPresent(Int.self, forKey: .errorCode) ?? 0
        errorDescription = try container.decodeIfPresent(String.self, forKey: .errorDescription) ?? ""
    }

    public var isWrongLastSequence: Bool { errorCode == Self.wrongLastSequence }

    public var description: String { "JetStream error \(errorCode) (\(code)): \(errorDescription)" }
}

/// The answer to a publish into a stream.
public struct PubAck: Decodable, Equatable, Sendable {
    public var stream: String
    public var sequence: UInt64
    /// The message id was seen within the duplicate window: nothing new was stored, and
    /// `sequence` is that of the first copy.
    public var duplicate: Bool

    enum CodingKeys: String, CodingKey { case stream, sequence = "seq", duplicate }

    public init(stream: String, sequence: UInt64, duplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stream = try container.decode(String.self, forKey: .stream)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        duplicate = try container.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
    }
}

/// A message as the stream stores it.
public struct StoredMessage: Equatable, Sendable {
    public var subject: String
    public var sequence: UInt64
    public var headers: NATSHeaders?
    public var payload: [UInt8]
    /// When the stream stored it, as the server wrote it (RFC 3339).
    public var time: String

    struct Raw: Decodable {
        var subject: String
        var seq: UInt64
        var hdrs: String?
        var data: String?
        var time: String?
    }

    init(_ raw: Raw) throws {
        subject = raw.subject
        sequence = raw.seq
        time = raw.time ?? ""
        func bytes(_ base64: String?) throws -> [UInt8] {
            guard let base64 else { return [] }
            guard let data = Data(base64Encoded: base64) else {
                throw NATSError.protocolViolation("stored message \(raw.seq) has data that is not base64")
            }
            return Array(data)
        }
        let headerBytes = try bytes(raw.hdrs)
        headers = headerBytes.isEmpty ? nil : try NATSHeaders.decode(headerBytes[...])
        payload = try bytes(raw.data)
    }
}
