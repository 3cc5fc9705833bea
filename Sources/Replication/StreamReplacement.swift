import NATSClient

/// A rewrite on the original that is replacing the stream (docs/REPLICATION.md, "Forgetting
/// after shipping"): between deleting the stream and deleting its safety copy, the stream is
/// missing or shorter than the history, and only the copy holds all of it. A restore or a
/// follower started then would take a prefix for the whole, or find nothing; they wait.
struct StreamReplacement: Equatable, Sendable {
    /// The last event the stream holds again (0 while it is missing or empty).
    var written: UInt64
    /// The last event of the safety copy: where the stream will end.
    var total: UInt64

    /// The replacement under way on `stream`, if one is: its safety copy is there and ends after
    /// the stream does. Nil when there is no copy (no rewrite, or one done), when the copy is
    /// still being written (the stream is then whole), and for a safety copy itself.
    static func underWay(on stream: ReplicationStream, jetStream: JetStream) async throws -> StreamReplacement? {
        guard !stream.isSafetyCopy else { return nil }
        guard let total = try await lastEvent(of: stream.safetyCopy, jetStream: jetStream) else { return nil }
        let written = try await lastEvent(of: stream, jetStream: jetStream) ?? 0
        return written < total ? StreamReplacement(written: written, total: total) : nil
    }

    /// Waits while a replacement is under way on `stream`, telling `progress` how far it has
    /// come each time that changes. A replacement that does not move for `patience` means its
    /// replicator stopped: that is an error naming what to do.
    static func waitForEnd(
        of stream: ReplicationStream, jetStream: JetStream, patience: Duration = .seconds(60), poll: Duration = .seconds(1),
        progress: (@Sendable (String) -> Void)?
    ) async throws {
        var seen: StreamReplacement? = nil
        var movedAt = ContinuousClock.now
        while let now = try await Replicator.clusterCall(
            "look whether the stream \(stream.name) is being rewritten", { try await underWay(on: stream, jetStream: jetStream) })
        {
            if now != seen {
                seen = now
                movedAt = .now
                progress?(
                    "the stream \(stream.name) is being rewritten by the original's replicator (a place was forgotten):"
                        + " \(now.written) of \(now.total) events written back; waiting for it to finish")
            } else if ContinuousClock.now - movedAt >= patience {
                throw ReplicationError.rewriting(
                    "the stream \(stream.name) is being rewritten, but the rewrite has not moved for \(patience)"
                        + " (\(now.written) of \(now.total) events written back): the original's replicator has stopped."
                        + " Start it again (vt replicate or vt serve --replicate on the original store) to finish the rewrite,"
                        + " or restore from its safety copy \(stream.safetyCopy.name), which holds the whole history")
            }
            try await Task.sleep(for: poll)
        }
    }

    /// The last event a stream's last message holds; nil when the stream is missing or empty.
    /// Asks for the stream's info first: the cluster's meta leader says at once when a stream is
    /// missing, while a message request for a stream just deleted went unanswered until it
    /// timed out (10 s) in a test.
    private static func lastEvent(of stream: ReplicationStream, jetStream: JetStream) async throws -> UInt64? {
        do {
            guard try await jetStream.streamInfo(stream.name).state.messages > 0 else { return nil }
            return try await StreamReading.lastBatch(of: stream, jetStream: jetStream)?.summary.last
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            return nil
        }
    }
}
