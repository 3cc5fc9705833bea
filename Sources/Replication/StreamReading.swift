import EventLog
import NATSClient

/// Reads a store's stream message by message and checks each against the chain: the events
/// of a message must follow the ones before, chain to the head shipped with them, and come from
/// one log. Restore and follow read through it.
struct StreamReading {
    let jetStream: JetStream
    let stream: ReplicationStream
    private(set) var identity: LogIdentity?
    /// The chain after the last checked event.
    private(set) var chain: EventChain?

    init(jetStream: JetStream, stream: ReplicationStream, identity: LogIdentity? = nil, after head: LogHead? = nil) {
        self.jetStream = jetStream
        self.stream = stream
        self.identity = identity
        if let head { chain = EventChain(head: head.hash, after: head.sequence) }
    }

    /// Continues the chain from `head` (a replica that holds part of a message rehashes it from
    /// the head before that message).
    mutating func reposition(after head: LogHead) {
        chain = EventChain(head: head.hash, after: head.sequence)
    }

    /// The stream's state, or ``ReplicationError/streamNotFound(_:)``.
    static func info(_ stream: ReplicationStream, jetStream: JetStream) async throws -> StreamInfo {
        do {
            return try await jetStream.streamInfo(stream.name)
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            throw ReplicationError.streamNotFound(
                "there is no stream \(stream.name) on the cluster; `vt replicate --status` in the original store names its stream")
        } catch {
            throw ReplicationError.cluster("cannot look up the stream \(stream.name): \(error)")
        }
    }

    /// The events of one message, checked; none for a message wholly at or before the chain's
    /// position.
    mutating func events(of message: JetStreamMessage) throws -> [LogEvent] {
        let place = "stream \(stream.name) message \(message.streamSequence)"
        let summary = try BatchHeader.read(message.headers, where: place)
        let batch = try ReplicationBatch(decoding: message.payload, where: place)
        guard summary.first == batch.firstSequence, summary.last == batch.lastSequence, summary.head == batch.head else {
            throw ReplicationError.malformedMessage("\(place): its headers and its body name different events")
        }
        if let identity {
            guard summary.identity == identity else {
                throw ReplicationError.conflict("\(place) belongs to the log \(summary.identity.logIDHex), not \(identity.logIDHex)")
            }
        } else {
            identity = summary.identity
        }
        if chain == nil { chain = EventChain(head: summary.identity.anchor, after: 0) }
        let known = chain!.sequence
        guard batch.firstSequence <= known + 1 else {
            throw ReplicationError.chainMismatch("\(place) starts at event \(batch.firstSequence), but event \(known + 1) comes next: events are missing")
        }
        guard batch.lastSequence > known else { return [] }  // all of it is known already
        guard batch.firstSequence == known + 1 else {
            throw ReplicationError.chainMismatch("\(place) starts inside what this copy holds; read from its first event")
        }
        var check = chain
        for event in batch.events { check!.append(event) }
        guard check!.head == batch.head else {
            throw ReplicationError.chainMismatch(
                "\(place)'s events \(batch.firstSequence)…\(batch.lastSequence) do not chain to the head shipped with them"
                    + " (\(batch.head.description.prefix(16))…): the copy is damaged or was tampered with")
        }
        chain = check
        return batch.events
    }
}

extension StreamReading {
    /// The stream's last message: its sequence and what its headers say; nil when the stream
    /// holds none. The cluster's own errors (no such stream, no answer) come as they are.
    static func lastBatch(of stream: ReplicationStream, jetStream: JetStream) async throws -> (
        sequence: UInt64, summary: BatchHeader.Summary
    )? {
        let last: StoredMessage
        do {
            last = try await jetStream.lastMessage(stream: stream.name, subject: stream.subject)
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.noMessageFound {
            return nil
        }
        return (last.sequence, try BatchHeader.read(last.headers, where: "stream \(stream.name) message \(last.sequence)"))
    }

    /// Hands the messages of `stream` from sequence `first` through `last` to `body`, in order,
    /// until it returns false. Reads through a pull consumer that is created again from where
    /// reading stopped whenever it fails: after a server died, the cluster may take a while to
    /// place a consumer, and the one in use may be gone.
    static func forEachMessage(
        jetStream: JetStream, stream: ReplicationStream, from first: UInt64, through last: UInt64,
        _ body: (JetStreamMessage) async throws -> Bool
    ) async throws {
        var consumer: PullConsumer? = nil
        defer { if let consumer { Task { try? await consumer.delete() } } }
        var next = first
        while next <= last {
            let messages = try await Replicator.patientClusterCall("read the stream \(stream.name)") {
                do {
                    if consumer == nil { consumer = try await jetStream.pullConsumer(stream: stream.name, from: .sequence(next)) }
                    // No more than the stream still holds: a pull for more waits out its expiry.
                    return try await consumer!.next(batch: Int(min(64, last - next + 1)), expires: .seconds(2))
                } catch {
                    if let lost = consumer { Task { try? await lost.delete() } }
                    consumer = nil
                    throw error
                }
            }
            for message in messages {
                guard message.streamSequence == next else {
                    throw ReplicationError.chainMismatch("stream \(stream.name) gave message \(message.streamSequence) where \(next) was due")
                }
                next += 1
                guard try await body(message) else { return }
            }
        }
    }
}
