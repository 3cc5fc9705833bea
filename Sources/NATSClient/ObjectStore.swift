import Crypto
import Foundation

/// A JetStream Object Store bucket, laid out as JetStream documents it so other NATS clients
/// read what this one writes: the stream `OBJ_<bucket>`, an object's chunks on
/// `$O.<bucket>.C.<nuid>`, its description (JSON) on `$O.<bucket>.M.<base64url(name)>` as a
/// roll-up (`Nats-Rollup: sub`: the newest description replaces the older ones), and the digest
/// `SHA-256=<base64url>` of the whole object.
public struct ObjectStore: Sendable {
    public let jetStream: JetStream
    public let bucket: String
    public var chunkSize: Int = 128 << 10
    /// When the bucket's stream was made, as ``createOrLookUp(_:bucket:replicas:storage:)``
    /// found it (nil otherwise): what was put into a bucket of that name before is in this one
    /// only if this did not change.
    public private(set) var created: String?

    public var streamName: String { "OBJ_\(bucket)" }

    init(jetStream: JetStream, bucket: String) {
        self.jetStream = jetStream
        self.bucket = bucket
    }

    /// The bucket, made when missing (file storage, `replicas` copies).
    public static func createOrLookUp(
        _ jetStream: JetStream, bucket: String, replicas: Int = 1, storage: StreamConfig.Storage = .file
    ) async throws -> ObjectStore {
        guard !bucket.isEmpty, bucket.utf8.allSatisfy({ isBucketCharacter($0) }) else {
            throw NATSError.invalidArgument("the bucket name '\(bucket)' may hold only letters, digits, '-' and '_'")
        }
        var store = ObjectStore(jetStream: jetStream, bucket: bucket)
        let config = StreamConfig(
            name: store.streamName, subjects: ["$O.\(bucket).C.>", "$O.\(bucket).M.>"], storage: storage,
            replicas: replicas, allowRollup: true, discard: "new")
        store.created = try await jetStream.createOrLookUpStream(config).created
        return store
    }

    private static func isBucketCharacter(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// Stores `data` under `name`, replacing an older object of that name (whose chunks are
    /// purged once the new description is stored).
    @discardableResult
    public func put(_ name: String, data: [UInt8]) async throws -> ObjectInfo {
        guard !name.isEmpty else { throw NATSError.invalidArgument("an object name may not be empty") }
        return try await put(name, data: data, replacing: try await info(name))
    }

    /// Stores `data` under `name` without asking whether an object of that name is there: one
    /// round trip fewer, for a caller that knows there is none. Were there one, the newer
    /// description replaces it and the older chunks stay behind, unread.
    public func putNew(_ name: String, data: [UInt8]) async throws {
        guard !name.isEmpty else { throw NATSError.invalidArgument("an object name may not be empty") }
        try await put(name, data: data, replacing: nil)
    }

    /// Stores `data` under `name` unless an object of that name is there; returns whether it
    /// stored it. For content-addressed names, where an object there already holds these bytes.
    public func putIfAbsent(_ name: String, data: [UInt8]) async throws -> Bool {
        guard !name.isEmpty else { throw NATSError.invalidArgument("an object name may not be empty") }
        let previous = try await info(name)
        guard previous == nil else { return false }
        try await put(name, data: data, replacing: nil)
        return true
    }

    @discardableResult
    private func put(_ name: String, data: [UInt8], replacing previous: ObjectInfo?) async throws -> ObjectInfo {
        let nuid = NUID.next()
        let chunkSubject = "$O.\(bucket).C.\(nuid)"
        var hasher = SHA256()
        var chunks = 0
        var offset = 0
        while offset < data.count {
            let chunk = Array(data[offset..<min(offset + chunkSize, data.count)])
            hasher.update(data: chunk)
            _ = try await jetStream.publish(chunkSubject, payload: chunk)
            chunks += 1
            offset += chunk.count
        }
        let info = ObjectInfo(
            name: name, bucket: bucket, nuid: nuid, size: UInt64(data.count), chunks: chunks,
            digest: "SHA-256=" + Self.base64URL(Array(hasher.finalize())),
            mtime: RFC3339.string(from: Date()), options: .init(maxChunkSize: chunkSize))
        try await publishDescription(info)
        if let previous, previous.nuid != nuid {
            try await jetStream.purgeStream(streamName, subject: "$O.\(bucket).C.\(previous.nuid)")
        }
        return info
    }

    /// The object's description, nil when there is none (or it was deleted).
    public func info(_ name: String) async throws -> ObjectInfo? {
        do {
            let stored = try await jetStream.lastMessage(stream: streamName, subject: metaSubject(name))
            let info = try JetStream.decode(ObjectInfo.self, from: stored.payload, what: "the description of object '\(name)'")
            return info.deleted == true ? nil : info
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.noMessageFound {
            return nil
        }
    }

    public func exists(_ name: String) async throws -> Bool { try await info(name) != nil }

    /// The names of the objects in the bucket (deleted ones left out), from the newest
    /// description of each name, read through a consumer made for the call.
    public func names() async throws -> [String] {
        let consumer = try await jetStream.pullConsumer(stream: streamName, from: .lastPerSubject, filterSubject: "$O.\(bucket).M.>")
        defer { Task { try? await consumer.delete() } }
        var names: [String] = []
        while true {
            let messages = try await consumer.next(batch: 256, noWait: true)
            for message in messages {
                let info = try JetStream.decode(ObjectInfo.self, from: message.payload, what: "a description in bucket '\(bucket)'")
                if info.deleted != true { names.append(info.name) }
            }
            guard let last = messages.last, last.pending > 0 else { break }
        }
        return names
    }

    /// Deletes the object as JetStream documents it: the object's chunks are purged, then a
    /// description marked deleted replaces the old one (a roll-up). In that order, so that a
    /// delete cut off between the two leaves a description to find, and a retry purges again
    /// and finishes. Returns false when there was no object of that name.
    @discardableResult
    public func delete(_ name: String) async throws -> Bool {
        guard !name.isEmpty else { throw NATSError.invalidArgument("an object name may not be empty") }
        guard var info = try await info(name) else { return false }
        try await jetStream.purgeStream(streamName, subject: "$O.\(bucket).C.\(info.nuid)")
        info.deleted = true
        info.size = 0
        info.chunks = 0
        info.digest = ""
        info.mtime = RFC3339.string(from: Date())
        try await publishDescription(info)
        return true
    }

    /// Stores an object's description as a roll-up: the newest of a name replaces the older.
    private func publishDescription(_ info: ObjectInfo) async throws {
        var headers = NATSHeaders()
        try headers.append("Nats-Rollup", "sub")
        _ = try await jetStream.publish(metaSubject(info.name), payload: Array(try JSONEncoder().encode(info)), headers: headers)
    }

    /// The object's bytes, checked against the size, chunk count and digest of its description.
    public func get(_ name: String) async throws -> [UInt8] {
        guard let info = try await info(name) else { throw ObjectStoreError.notFound(bucket: bucket, name: name) }
        // The description's size is only a claim until the chunks bear it out: reserve at most
        // 16 MiB ahead, and compare in its own type, so that a damaged description cannot trap.
        var data: [UInt8] = []
        data.reserveCapacity(Int(min(info.size, 1 << 24)))
        var chunks = 0
        // Chunk by chunk with a message get each, not a consumer: fewer round trips for the
        // usual one-chunk photo, and no consumer to place while the cluster is electing leaders.
        let chunkSubject = "$O.\(bucket).C.\(info.nuid)"
        var next: UInt64 = 1
        while chunks < info.chunks, UInt64(data.count) <= info.size {
            let message: StoredMessage
            do { message = try await jetStream.nextMessage(stream: streamName, subject: chunkSubject, from: next) } catch let error
                as JetStreamAPIError where error.errorCode == JetStreamAPIError.noMessageFound
            {
                break
            }
            data += message.payload
            chunks += 1
            next = message.sequence + 1
        }
        guard chunks == info.chunks, data.count == info.size else {
            throw ObjectStoreError.sizeMismatch(name: name, expected: info.size, chunks: info.chunks, found: UInt64(data.count), foundChunks: chunks)
        }
        let digest = "SHA-256=" + Self.base64URL(Array(SHA256.hash(data: data)))
        guard digest == info.digest else { throw ObjectStoreError.digestMismatch(name: name, expected: info.digest, found: digest) }
        return data
    }

    func metaSubject(_ name: String) -> String { "$O.\(bucket).M.\(Self.base64URL(Array(name.utf8)))" }

    /// Base64 with the URL alphabet and padding, as Go's base64.URLEncoding writes it.
    static func base64URL(_ bytes: [UInt8]) -> String {
        // Byte by byte: Foundation's replacingOccurrences goes through NSString, on every upload.
        String(decoding: Data(bytes).base64EncodedData().map { $0 == UInt8(ascii: "+") ? UInt8(ascii: "-") : $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
    }
}

/// An object's description, the JSON stored on `$O.<bucket>.M.<name>`.
public struct ObjectInfo: Codable, Equatable, Sendable {
    public var name: String
    public var bucket: String
    public var nuid: String
    public var size: UInt64
    public var chunks: Int
    public var digest: String
    public var mtime: String
    public var deleted: Bool?
    public var options: Options?

    public struct Options: Codable, Equatable, Sendable {
        public var maxChunkSize: Int?
        enum CodingKeys: String, CodingKey { case maxChunkSize = "max_chunk_size" }
    }
}

public enum ObjectStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case notFound(bucket: String, name: String)
    case sizeMismatch(name: String, expected: UInt64, chunks: Int, found: UInt64, foundChunks: Int)
    case digestMismatch(name: String, expected: String, found: String)

    public var description: String {
        switch self {
        case .notFound(let bucket, let name): "no object '\(name)' in bucket '\(bucket)'"
        case .sizeMismatch(let name, let expected, let chunks, let found, let foundChunks):
            "object '\(name)' should have \(expected) bytes in \(chunks) chunks, but \(found) bytes in \(foundChunks) chunks were read"
        case .digestMismatch(let name, let expected, let found):
            "object '\(name)' has digest \(found), not \(expected) as its description says"
        }
    }
}
