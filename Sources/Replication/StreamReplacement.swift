import NATSClient

/// A rewrite on the original that is replacing the stream (docs/REPLICATION.md, "Forgetting
/// after shipping"): between deleting the stream and deleting its safety copy, the stream is
/// missing or shorter than the history, and only the copy holds all of it. A restore or a
/// follower started then would take a prefix for the whole, or find nothing; they wait.
///
/// The copy's messages have the stream's sequence numbers (a rewrite writes the same messages
/// again), so the two streams' last sequences compare directly. Both come from stream infos,
/// which the cluster's meta leader answers, at once also for a stream that is missing; a message
/// request for a stream just deleted went unanswered until it timed out (10 s) in a test.
struct StreamReplacement: Equatable, Sendable {
    /// Messages the stream holds again (0 while it is missing or empty).
    var written: UInt64
    /// Messages of the safety copy: where the stream will end.
    var total: UInt64

    /// The replacement under way on `stream`, if one is: its safety copy is there and ends after
    /// the stream does. Nil when there is no copy (no rewrite, or one done), when the copy is
    /// still being written (the stream is then whole), and for a safety copy itself.
    static func underWay(on stream: ReplicationStream, jetStream: JetStream) async throws -> StreamReplacement? {
        guard let total = try await copyEnd(of: stream, jetStream: jetStream) else { return nil }
        let written = try await lastSequence(of: stream, jetStream: jetStream) ?? 0
        return written < total ? StreamReplacement(written: written, total: total) : nil
    }

    /// Whether the safety copy holds messages past `last` of `stream`: a reading of the stream
    /// that ends at `last` (its info taken a moment ago) may be a prefix being written back.
    static func copyGoesPast(_ last: UInt64, of stream: ReplicationStream, jetStream: JetStream) async throws -> Bool {
        guard let total = try await copyEnd(of: stream, jetStream: jetStream) else { return false }
        return last < total
    }

    /// Waits while a replacement is under way on `stream`, telling `progress` how far it has
    /// come each time that changes. A replacement that does not move for `patience` means its
    /// replicator stopped: that is an error naming what to do. Once a replacement was seen, a
    /// check the cluster fails to answer counts as no move (a leader election passes; a cluster
    /// that stays away does not); before, the wait ends, and the reading meets the failure itself.
    static func waitForEnd(
        of stream: ReplicationStream, jetStream: JetStream, patience: Duration = .seconds(60), poll: Duration = .seconds(1),
        progress: (@Sendable (String) -> Void)?
    ) async throws {
        var seen: StreamReplacement? = nil
        var movedAt = ContinuousClock.now
        while true {
            try Task.checkCancellation()
            let now: StreamReplacement?
            do {
                now = try await underWay(on: stream, jetStream: jetStream)
            } catch is CancellationError {
                throw CancellationError()
            } catch where seen == nil {
                // Nothing seen to wait for: the reading's own requests fail as they would have
                // (JetStream disabled, no such stream), or find a replacement and come back.
                return
            } catch where Replicator.isTransient(error) && ContinuousClock.now - movedAt < patience {
                try await Task.sleep(for: poll)
                continue
            } catch {
                throw ReplicationError.cluster("cannot look whether the stream \(stream.name) is still being rewritten: \(error)")
            }
            guard let now else { return }
            if now != seen {
                seen = now
                movedAt = .now
                progress?(
                    "the stream \(stream.name) is being rewritten by the original's replicator (a place was forgotten):"
                        + " \(now.written) of \(now.total) messages written back; waiting for it to finish")
            } else if ContinuousClock.now - movedAt >= patience {
                throw ReplicationError.rewriting(
                    "the stream \(stream.name) is being rewritten, but the rewrite has not moved for \(patience)"
                        + " (\(now.written) of \(now.total) messages written back): the original's replicator has stopped."
                        + " Start it again (vt replicate or vt serve --replicate on the original store) to finish the rewrite,"
                        + " or restore from its safety copy \(stream.safetyCopy.name), which holds the whole history")
            }
            try await Task.sleep(for: poll)
        }
    }

    /// Runs `body`, a reading of `stream` from its start, once no replacement is under way
    /// (``waitForEnd(of:jetStream:patience:poll:progress:)``), and again, at most twice more,
    /// when it fails because one began meanwhile.
    static func reading<T>(
        _ stream: ReplicationStream, jetStream: JetStream, patience: Duration = .seconds(60),
        progress: (@Sendable (String) -> Void)?, _ body: () async throws -> T
    ) async throws -> T {
        var restarts = 0
        while true {
            try await waitForEnd(of: stream, jetStream: jetStream, patience: patience, progress: progress)
            do {
                return try await body()
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // A read cut off by a rewrite fails in many ways (no stream, no answer, a message
                // out of place, a replica ahead of the stream); whether a rewrite is why, the copy tells.
                let rewritten: Bool
                if case ReplicationError.rewriting = error { rewritten = true } else {
                    rewritten = (try? await underWay(on: stream, jetStream: jetStream)) != nil
                }
                guard rewritten, restarts < 2 else { throw error }
                restarts += 1
                progress?("the stream \(stream.name) began to be rewritten while it was read; reading it again when that is done")
            }
        }
    }

    /// The last sequence of `stream`'s safety copy; nil when there is none, it is empty, or
    /// `stream` is a safety copy itself.
    private static func copyEnd(of stream: ReplicationStream, jetStream: JetStream) async throws -> UInt64? {
        guard !stream.isSafetyCopy, let end = try await lastSequence(of: stream.safetyCopy, jetStream: jetStream), end > 0 else {
            return nil
        }
        return end
    }

    /// A stream's last sequence (0 when empty); nil when the stream is missing.
    private static func lastSequence(of stream: ReplicationStream, jetStream: JetStream) async throws -> UInt64? {
        do {
            return try await jetStream.streamInfo(stream.name).state.lastSequence
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            return nil
        }
    }
}
