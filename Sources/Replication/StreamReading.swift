import EventLog
import NATSClient

/// Reads a store's stream message by message, each checked against the chain
/// (``ShippedChainCheck``). Restore and follow read through it.
struct StreamReading {
    let jetStream: JetStream
    let stream: ReplicationStream
    private var check: ShippedChainCheck
    var identity: LogIdentity? { check.identity }
    /// The chain after the last checked event.
    var chain: EventChain? { check.chain }

    init(jetStream: JetStream, stream: ReplicationStream, identity: LogIdentity? = nil, after head: LogHead? = nil) {
        self.jetStream = jetStream
        self.stream = stream
        check = ShippedChainCheck(identity: identity, after: head)
    }

    /// Continues the chain from `head` (a replica that holds part of a message rehashes it from
    /// the head before that message).
    mutating func reposition(after head: LogHead) { check.reposition(after: head) }

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
        try check.events(
            headers: message.headers, body: message.payload, place: "stream \(stream.name) message \(message.streamSequence)")
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
