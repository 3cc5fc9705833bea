import EventLog
import NATSClient

/// Where a store's copy lives in JetStream (docs/REPLICATION.md, "Stream layout"): one stream of
/// event batches, and an Object Store bucket of photos named by their digests.
public struct ReplicationStream: Hashable, Sendable {
    /// The stream's name; by default `VT_` and the log id in hex.
    public let name: String

    public init(name: String) throws {
        guard !name.isEmpty, name.count <= 200,
            name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F })
        else {
            throw ReplicationError.invalid(
                "the stream name '\(name)' may hold only letters, digits, '-' and '_' (at most 200 of them)")
        }
        self.name = name
    }

    /// The default stream of a log.
    public init(for identity: LogIdentity) {
        name = "VT_" + identity.logIDHex
    }

    /// The subject its event batches are published on.
    public var subject: String { "vt.\(name).events" }
    /// The Object Store bucket of its photos (the stream `OBJ_<bucket>`). A rewrite's safety
    /// copy has no bucket of its own: its photos are in the bucket of the stream it copies.
    public var bucket: String { isSafetyCopy ? String(name.dropLast(Self.safetyCopySuffix.count)) : name }

    static let safetyCopySuffix = "_REWRITE"

    /// The stream a rewrite keeps a whole copy of the history in while it replaces this one
    /// (docs/REPLICATION.md, "Forgetting after shipping").
    public var safetyCopy: ReplicationStream { ReplicationStream(checked: name + Self.safetyCopySuffix) }

    /// Whether this is a rewrite's safety copy, which only a rewrite writes.
    public var isSafetyCopy: Bool { name.hasSuffix(Self.safetyCopySuffix) && name.count > Self.safetyCopySuffix.count }

    private init(checked name: String) { self.name = name }

    func configuration(replicas: Int) -> StreamConfig {
        // No deletes and no purges: the copy is an audit trail as much as a backup. A long
        // duplicate window lets a replicator retry a publish across a leader election.
        StreamConfig(
            name: name, subjects: [subject], storage: .file, replicas: replicas, denyDelete: true, denyPurge: true,
            duplicateWindow: .seconds(600))
    }
}

/// The headers every batch carries, so a reader can place it without decoding its body.
enum BatchHeader {
    static let logID = "Vt-Log-Id"
    static let originSequence = "Vt-Origin-Sequence"
    static let originHash = "Vt-Origin-Hash"
    static let first = "Vt-First"
    static let last = "Vt-Last"
    static let head = "Vt-Head"

    static func make(_ batch: ReplicationBatch, identity: LogIdentity) throws -> NATSHeaders {
        var headers = NATSHeaders()
        try headers.set(logID, identity.logIDHex)
        try headers.set(originSequence, String(identity.origin.sequence))
        if let hash = identity.origin.hash { try headers.set(originHash, hash.description) }
        try headers.set(first, String(batch.firstSequence))
        try headers.set(last, String(batch.lastSequence))
        try headers.set(head, batch.head.description)
        return headers
    }

    /// What a stored batch's headers say: its identity, its last event and the head after it.
    struct Summary: Equatable {
        var identity: LogIdentity
        var first: UInt64
        var last: UInt64
        var head: ChainHash
    }

    static func read(_ headers: NATSHeaders?, where place: String) throws -> Summary {
        func value(_ name: String) throws -> String {
            guard let text = headers?.values(name).first else {
                throw ReplicationError.malformedMessage("\(place) has no \(name) header; it was not written by vt replicate")
            }
            return text
        }
        func number(_ name: String) throws -> UInt64 {
            guard let value = UInt64(try value(name)) else { throw ReplicationError.malformedMessage("\(place)'s \(name) is not a number") }
            return value
        }
        func hash(_ name: String) throws -> ChainHash {
            guard let bytes = parseHex(try value(name)), let hash = ChainHash(validating: bytes) else {
                throw ReplicationError.malformedMessage("\(place)'s \(name) is not 64 hex digits")
            }
            return hash
        }
        guard let id = parseHex(try value(logID)), id.count == 16 else {
            throw ReplicationError.malformedMessage("\(place)'s \(logID) is not 32 hex digits")
        }
        let originAt = try number(originSequence)
        let origin = LogOrigin(sequence: originAt, hash: originAt == 0 ? nil : try hash(originHash))
        let summary = Summary(
            identity: LogIdentity(logID: id, origin: origin), first: try number(first), last: try number(last), head: try hash(head))
        guard summary.first >= 1, summary.first <= summary.last else {
            throw ReplicationError.malformedMessage("\(place) says it holds events \(summary.first)…\(summary.last)")
        }
        return summary
    }
}

func parseHex(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
    var index = 0
    while index < digits.count {
        guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
        index += 2
    }
    return bytes
}
