import EventLog
import NATSClient

/// Two stores may ship one device's log into its stream: the device its own log, and a store of
/// the same map its copy of it (docs/REPLICATION.md, "A store of several devices"). Both hold
/// the same chain, so neither is a second writer: a publish that finds the other's messages
/// there checks that they are the same history, and goes on after them. A stream that differs
/// from the log at the same event is a conflict, as it always was.
extension Replicator {
    /// After a publish refused for its expected last sequence: takes the stream's last message
    /// as acknowledged when the log holds the same history up to it (the batch's own lost answer,
    /// or another store shipping this log), and throws a conflict otherwise.
    func settleRefusedPublish(of batch: ReplicationBatch, expected: UInt64) async throws {
        guard let (sequence, summary) = try await StreamReading.lastBatch(of: stream, jetStream: jetStream) else {
            throw try await Self.emptyStreamError(stream, jetStream: jetStream, shipped: expected)
        }
        if summary.identity == identity, summary.last == batch.lastSequence, summary.head == batch.head {
            return acknowledged(batch, streamSequence: sequence)
        }
        if summary.identity == identity, try await isSameHistory(summary, lastMessage: sequence) {
            try adopt(summary, streamSequence: sequence)
            return
        }
        throw ReplicationError.conflict(
            "another writer appended to stream \(stream.name) (its last message \(sequence) holds events"
                + " \(summary.first)…\(summary.last), where this store expected to add \(batch.firstSequence)…\(batch.lastSequence));"
                + " nothing was overwritten. Is a copy of this store replicating to the same stream?")
    }

    /// What an empty stream that this store shipped `messages` messages to means. While its
    /// safety copy exists, its device is rewriting it after a forget (the copy's events may
    /// still hold what was forgotten): wait. Otherwise the cluster lost it (its storage gone, a
    /// cluster made anew at the same address) or someone deleted it: a `.cluster` error, after
    /// which the sync starts again (`vt serve --sync` retries a sync whose cluster fails), makes
    /// the stream and ships the log into it from its first event, photos too
    /// (``Replicator/start(store:connection:servers:options:)``; docs/SYNC.md, "Faults").
    static func emptyStreamError(_ stream: ReplicationStream, jetStream: JetStream, shipped messages: UInt64) async throws -> ReplicationError {
        do {
            _ = try await StreamReading.info(stream.safetyCopy, jetStream: jetStream)
            return .rewriting("the stream \(stream.name) is empty while its safety copy \(stream.safetyCopy.name) exists: its device is rewriting it; shipping waits")
        } catch ReplicationError.streamNotFound(_) {
            return .cluster(
                "the stream \(stream.name) is empty, though this store shipped \(messages) messages to it: the cluster lost it, or it was deleted;"
                    + " it is shipped again from the first event")
        }
    }

    /// Whether the stream, up to its last message, is the history this log holds: the same head
    /// at that event, or, for a copy that does not reach it yet, the same head where the copy ends.
    private func isSameHistory(_ summary: BatchHeader.Summary, lastMessage: UInt64) async throws -> Bool {
        if let local = try Self.storage({ try reader.head(at: summary.last) }) { return local.hash == summary.head }
        guard shipped.isCopy else { return false }
        do {
            try await Self.checkCopyAgrees(stream, jetStream: jetStream, reader: reader, lastMessage: lastMessage, options: options)
            return true
        } catch let error as ReplicationError {
            if case .conflict = error { return false }
            throw error
        }
    }

    /// Takes the stream's last message as where shipping stands: the next batch starts after it.
    private func adopt(_ summary: BatchHeader.Summary, streamSequence: UInt64) throws {
        noteAcknowledged(through: summary.last, head: summary.head, streamSequence: streamSequence)
        chain = EventChain(head: summary.head, after: summary.last)
        chainBeforePending = chain
        carried = nil
        cursor = try Self.storage { try reader.events(from: summary.last + 1) }
        let copyLast = try Self.storage { try reader.lastSequence() }
        streamAheadOfCopy = shipped.isCopy && summary.last > copyLast
        try saveRecord()
    }

    /// A publish answered as a duplicate: the message stored under its id must end where the batch
    /// does, with its head (another history that numbered the same events would pass otherwise).
    func checkDuplicate(of batch: ReplicationBatch, at sequence: UInt64) async throws {
        // A failure of the cluster goes up as it came: the batch is published again, and checked
        // again, as any publish the cluster did not answer (``isTransient(_:)``).
        let message = try await jetStream.message(stream: stream.name, sequence: sequence)
        let summary = try BatchHeader.read(message.headers, where: "stream \(stream.name) message \(sequence)")
        guard summary.identity == identity, summary.last == batch.lastSequence, summary.head == batch.head else {
            throw ReplicationError.conflict(
                "the stream \(stream.name) already holds a message with events \(batch.firstSequence)…\(batch.lastSequence) (message \(sequence)),"
                    + " but with another head: another history of this log was shipped there; nothing was overwritten")
        }
    }

    /// False while the stream holds events past the copy's last (nothing to ship); once the copy
    /// reaches past them, opens the cursor at the event after the stream's last.
    func copyReachesPastStream() throws -> Bool {
        guard streamAheadOfCopy else { return true }
        guard try Self.storage({ try reader.lastSequence() }) > chain.sequence else { return false }
        cursor = try Self.storage { try reader.events(from: chain.sequence + 1) }
        carried = nil
        streamAheadOfCopy = false
        return true
    }

    /// Checks that a copy that ends before the stream does is a prefix of the stream's history:
    /// the last message that ends within the copy must name the copy's head there (found by a
    /// binary search on the messages' headers). A copy inside the stream's first message has no
    /// head to compare yet, and passes.
    static func checkCopyAgrees(
        _ stream: ReplicationStream, jetStream: JetStream, reader: LogReader, lastMessage: UInt64, options: ReplicationOptions
    ) async throws {
        let mine = try storage { try reader.lastSequence() }
        guard mine > 0 else { return }
        func summary(_ sequence: UInt64) async throws -> BatchHeader.Summary {
            // Failures of the cluster go up as they came: retried by a running replicator.
            let message = try await throughElection("read message \(sequence) of stream \(stream.name)", options: options) {
                try await jetStream.message(stream: stream.name, sequence: sequence)
            }
            return try BatchHeader.read(message.headers, where: "stream \(stream.name) message \(sequence)")
        }
        let first = try await jetStream.streamInfo(stream.name).state.firstSequence
        var low = max(first, 1), high = lastMessage
        var found: BatchHeader.Summary? = nil
        while low <= high {
            let middle = low + (high - low) / 2
            let candidate = try await summary(middle)
            if candidate.last <= mine {
                found = candidate
                low = middle + 1
            } else {
                guard middle > low else { break }
                high = middle - 1
            }
        }
        guard let found else { return }
        let local = try storage { try reader.head(at: found.last) }
        guard local?.hash == found.head else {
            throw ReplicationError.conflict(
                "the stream \(stream.name) and this store's copy of its device's log differ at or before event \(found.last):"
                    + " one of them is another history of the device; nothing was shipped")
        }
    }
}
