import EventLog
import NATSClient

/// What a reader of a store's stream checks each message against, apart from the cluster that
/// delivered it: the events of a message must follow the ones before, chain to the head shipped
/// with them, and come from one log (docs/REPLICATION.md, "Messages"). Restore and follow read
/// through it (``StreamReading``), and the fuzz target `FuzzReplication` feeds it any bytes.
public struct ShippedChainCheck: Sendable {
    /// The log the messages come from: given, or taken from the first message.
    public private(set) var identity: LogIdentity?
    /// The chain after the last checked event; nil before the first message of a new copy.
    public private(set) var chain: EventChain?

    public init(identity: LogIdentity? = nil, after head: LogHead? = nil) {
        self.identity = identity
        if let head { chain = EventChain(head: head.hash, after: head.sequence) }
    }

    /// Continues the chain from `head` (a replica that holds part of a message rehashes it from
    /// the head before that message).
    public mutating func reposition(after head: LogHead) {
        chain = EventChain(head: head.hash, after: head.sequence)
    }

    /// The events of one message (its headers and body), checked; none for a message wholly at
    /// or before the chain's position. Nothing changes when it throws: a
    /// ``ReplicationError`` naming `place` and what is wrong.
    public mutating func events(headers: NATSHeaders?, body: [UInt8], place: String) throws -> [LogEvent] {
        let summary = try BatchHeader.read(headers, where: place)
        let batch = try ReplicationBatch(decoding: body, where: place)
        guard summary.first == batch.firstSequence, summary.last == batch.lastSequence, summary.head == batch.head else {
            throw ReplicationError.malformedMessage("\(place): its headers and its body name different events")
        }
        if let identity, summary.identity != identity {
            throw ReplicationError.conflict("\(place) belongs to the log \(summary.identity.logIDHex), not \(identity.logIDHex)")
        }
        var check = chain ?? EventChain(head: summary.identity.anchor, after: 0)
        let known = check.sequence
        guard batch.firstSequence <= known + 1 else {
            throw ReplicationError.chainMismatch("\(place) starts at event \(batch.firstSequence), but event \(known + 1) comes next: events are missing")
        }
        guard batch.lastSequence > known else {  // all of it is known already
            identity = summary.identity
            return []
        }
        guard batch.firstSequence == known + 1 else {
            throw ReplicationError.chainMismatch("\(place) starts inside what this copy holds; read from its first event")
        }
        for event in batch.events { check.append(event) }
        guard check.head == batch.head else {
            throw ReplicationError.chainMismatch(
                "\(place)'s events \(batch.firstSequence)…\(batch.lastSequence) do not chain to the head shipped with them"
                    + " (\(batch.head.description.prefix(16))…): the copy is damaged or was tampered with")
        }
        identity = summary.identity
        chain = check
        return batch.events
    }
}
