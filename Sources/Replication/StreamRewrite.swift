import EventLog
import Foundation
import NATSClient
import VirtualTourist

/// The steps of a stream's rewrite, in the order they run; the store's replication record
/// keeps the one under way, so a replicator stopped part way goes on from it.
public enum RewriteStep: String, Codable, Sendable {
    /// Reading the stream and the log's events side by side, to see whether a message differs.
    case compare
    /// Writing the safety copy.
    case copy
    /// Deleting the stream and writing it again from the safety copy's boundaries.
    case replace
    /// Deleting the safety copy and the photos no event names any more.
    case photos
}

/// What a rewrite found and did.
public struct RewriteReport: Equatable, Sendable {
    /// Messages the stream holds.
    public var messages: UInt64 = 0
    /// Of them, those whose events the log now holds otherwise (erased).
    public var changedMessages: UInt64 = 0
    /// Photos deleted from the bucket.
    public var photosDeleted = 0
    /// Whether the stream was written again (a rewrite resumed after its compare counts no
    /// changed messages, but may have replaced the stream).
    public var streamRewritten = false
}

/// Rewrites a store's stream from its log, message for message, so that what the log erased
/// since the messages were shipped is erased in the stream too (docs/REPLICATION.md,
/// "Forgetting after shipping"). The stream refuses deletes, so the only way is a new stream:
/// the rebuilt messages go first into a safety copy, then the stream is deleted and written
/// again, with the same sequence numbers, message ids and heads.
struct StreamRewrite {
    let jetStream: JetStream
    let stream: ReplicationStream
    let identity: LogIdentity
    /// The log the messages are rebuilt from.
    let logDirectory: String
    /// Records the step about to begin before it begins.
    let advance: (RewriteStep) async throws -> Void

    /// Runs the rewrite from `step` on. Deletes the photos that the uploaded list or the bucket's
    /// own list has and no event left in the log names; returns what it did, and the photos
    /// the bucket keeps that events name, which the caller writes as the uploaded list before it
    /// records the rewrite done.
    func run(from step: RewriteStep, deletingUnnamed uploaded: Set<String>, photoBucket: ObjectStore) async throws -> (
        RewriteReport, kept: Set<String>
    ) {
        var report = RewriteReport()
        var step = step
        if step == .compare {
            try await eachRebuilt(from: stream) { message, batch in
                report.messages += 1
                if batch.encoded() != message.payload { report.changedMessages += 1 }
            }
            step = report.changedMessages > 0 ? .copy : .photos
            try await advance(step)
        }
        if step == .copy {
            let replicas = try await jetStream.streamInfo(stream.name).config.replicas
            report.messages = try await write(from: stream, into: stream.safetyCopy, replicas: replicas)
            let original = try await lastSummary(of: stream), copy = try await lastSummary(of: stream.safetyCopy)
            guard copy?.messages == original?.messages, copy?.last == original?.last else {
                throw ReplicationError.cluster(
                    "the safety copy \(stream.safetyCopy.name) does not end where \(stream.name) does; it is written again")
            }
            step = .replace
            try await advance(step)
        }
        if step == .replace {
            try await checkNothingCameSince()
            let replicas = try await jetStream.streamInfo(stream.safetyCopy.name).config.replicas
            report.messages = try await write(from: stream.safetyCopy, into: stream, replicas: replicas)
            report.streamRewritten = true
            step = .photos
            try await advance(step)
        }
        try await deleteStream(stream.safetyCopy)
        let named = try photosNamed()
        // The bucket's own list too: a photo uploaded just before a crash never got its line in
        // the uploaded list.
        let listed = Set(try await photoBucket.names().filter { $0.utf8.count == 64 })
        let unnamed = uploaded.union(listed).subtracting(named)
        for name in unnamed.sorted() {
            if try await photoBucket.delete(name) { report.photosDeleted += 1 }
        }
        return (report, uploaded.union(listed).intersection(named))
    }

    /// Reads `source` message by message and hands each to `body` with the same events rebuilt
    /// from the local log: the same boundaries, and the head the message names, checked.
    private func eachRebuilt(
        from source: ReplicationStream, _ body: (JetStreamMessage, ReplicationBatch) async throws -> Void
    ) async throws {
        let info = try await StreamReading.info(source, jetStream: jetStream)
        guard info.state.messages > 0 else { return }
        let reader = try Replicator.storage { try LogReader(directory: logDirectory, payloadCodec: EventCodec.blockCodec) }
        let cursor = try Replicator.storage { try reader.events(from: 1) }
        var chain = EventChain(head: identity.anchor, after: 0)
        try await StreamReading.forEachMessage(
            jetStream: jetStream, stream: source, from: info.state.firstSequence, through: info.state.lastSequence
        ) { message in
            let place = "stream \(source.name) message \(message.streamSequence)"
            let summary = try BatchHeader.read(message.headers, where: place)
            guard summary.identity == identity else {
                throw ReplicationError.conflict("\(place) belongs to the log \(summary.identity.logIDHex), not \(identity.logIDHex)")
            }
            guard summary.first == chain.sequence + 1 else {
                throw ReplicationError.chainMismatch("\(place) starts at event \(summary.first), where \(chain.sequence + 1) comes next")
            }
            var events: [LogEvent] = []
            // The headers' claim bounds nothing until the log bears it out (below).
            events.reserveCapacity(Int(min(summary.last - summary.first + 1, 4096)))
            while chain.sequence < summary.last {
                guard let event = try Replicator.storage({ try cursor.next() }) else {
                    throw ReplicationError.conflict(
                        "\(place) holds events up to \(summary.last), but the log ends at \(chain.sequence): the stream was not written by this store")
                }
                chain.append(event)
                events.append(event)
            }
            guard chain.head == summary.head else {
                throw ReplicationError.chainMismatch(
                    "\(place) and the log differ at or before event \(summary.last): the stream is not this store's history")
            }
            try await body(message, ReplicationBatch(events: events, head: chain.head))
            return true
        }
    }

    /// Writes `target` afresh (deleted first when there) with `source`'s messages rebuilt.
    /// Returns the messages written. Failures of the cluster are thrown as they are, for the
    /// replicator to retry the step.
    private func write(from source: ReplicationStream, into target: ReplicationStream, replicas: Int) async throws -> UInt64 {
        try await deleteStream(target)
        _ = try await jetStream.createStream(target.configuration(replicas: replicas))
        var written: UInt64 = 0
        try await eachRebuilt(from: source) { _, batch in
            let ack = try await jetStream.publish(
                target.subject, payload: batch.encoded(), messageID: "\(batch.firstSequence)-\(batch.lastSequence)",
                expectedLastSequence: written, headers: try BatchHeader.make(batch, identity: identity))
            guard ack.stream == target.name, ack.sequence == written + 1 else {
                throw ReplicationError.conflict(
                    "while rewriting, stream \(ack.stream) took message \(ack.sequence) where \(target.name) should have taken \(written + 1)")
            }
            written += 1
        }
        return written
    }

    /// Refuses to delete a stream that holds anything but the safety copy or a prefix of it: a
    /// second writer (a copy of the store) that appended since the copy was taken, or began
    /// anew in the emptied stream, would lose what it was told was acknowledged.
    private func checkNothingCameSince() async throws {
        let copy = try await lastSummary(of: stream.safetyCopy)
        let original: (messages: UInt64, last: BatchHeader.Summary)?
        do { original = try await lastSummary(of: stream) } catch ReplicationError.streamNotFound { return }
        guard let original else { return }
        // A stream shorter than the copy is one a stopped rewrite was replacing: it must be a
        // prefix of the copy, not another writer's history begun in the emptied stream.
        var prefix = false
        if let copy, original.messages < copy.messages {
            let same = try await jetStream.message(stream: stream.safetyCopy.name, sequence: original.messages)
            prefix = try BatchHeader.read(same.headers, where: "stream \(stream.safetyCopy.name) message \(same.sequence)") == original.last
        }
        guard let copy, prefix || (original.messages == copy.messages && original.last == copy.last) else {
            throw ReplicationError.conflict(
                "the stream \(stream.name) holds \(original.messages) messages, up to event \(original.last.last), which its safety copy"
                    + " \(stream.safetyCopy.name) (\(copy?.messages ?? 0) messages) does not: another writer appended while it was being rewritten."
                    + " Nothing was deleted; is a copy of this store replicating to the same stream?")
        }
    }

    /// The stream's message count (its last sequence: these streams refuse deletes) and its
    /// last message's identity, range and head.
    private func lastSummary(of stream: ReplicationStream) async throws -> (messages: UInt64, last: BatchHeader.Summary)? {
        do {
            return try await StreamReading.lastBatch(of: stream, jetStream: jetStream).map { ($0.sequence, $0.summary) }
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            throw ReplicationError.streamNotFound("there is no stream \(stream.name) on the cluster")
        }
    }

    private func deleteStream(_ stream: ReplicationStream) async throws {
        do { try await jetStream.deleteStream(stream.name) } catch let error as JetStreamAPIError
            where error.errorCode == JetStreamAPIError.streamNotFound
        {}
    }

    /// Every photo an event left in the log names (an erased event names none).
    private func photosNamed() throws -> Set<String> {
        let reader = try Replicator.storage { try LogReader(directory: logDirectory, payloadCodec: EventCodec.blockCodec) }
        let cursor = try Replicator.storage { try reader.events(from: 1) }
        var names = Set<String>()
        var events: [LogEvent] = []
        while let event = try Replicator.storage({ try cursor.next() }) {
            events.append(event)
            if events.count == 4096 {
                names.formUnion(Replicator.photos(in: events))
                events.removeAll(keepingCapacity: true)
            }
        }
        names.formUnion(Replicator.photos(in: events))
        return names
    }
}
