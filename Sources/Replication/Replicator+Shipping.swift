import BlobStore
import EventLog
import FileIO
import Foundation
import NATSClient
import Synchronization
import VirtualTourist

/// Reading the next batch from the log and publishing it into the stream.
extension Replicator {
    /// Ships one batch (the one that failed last, or the next from the log); false when the log
    /// has nothing more.
    func shipNext() async throws -> Bool {
        if rewritesOnEveryForget.load(ordering: .relaxed) { try noteForgets() }
        if let step = shared.withLock({ $0.record.rewrite }) { try await rewriteStream(from: step) }
        if pending == nil {
            try reopenAfterForgets()
            chainBeforePending = chain
            pending = try nextBatch()
        }
        guard let batch = pending else { return false }
        // A forget that began since the batch was read may have erased some of its events.
        guard try batchStillHolds() else { return true }
        let named = Self.scan(batch.events)
        try await uploadPhotos(named.photos)
        guard try batchStillHolds() else { return true }
        if named.forgetsAPlace {
            // Recorded before the batch leaves: once it has, the stream must lose the place too,
            // even if this process ends right after the acknowledgement.
            shared.withLock { $0.record.rewrite = .compare }
            try saveRecord()
        }
        try await publish(batch)
        photosInDoubt = photoListLost
        pending = nil
        return true
    }

    func nextBatch() throws -> ReplicationBatch? {
        guard try copyReachesPastStream() else { return nil }
        var events: [LogEvent] = []
        var bytes = ReplicationBatch.fixedSize
        let limit = min(options.maxBatchBytes, (connection.serverInfo?.maxPayload ?? 1 << 20) - 8192)
        while events.count < options.maxBatchEvents, bytes < limit {
            guard let event = try carried ?? Self.storage({ try cursor.next() }) else { break }
            carried = nil
            let size = ReplicationBatch.perEventSize + event.payload.count
            guard events.isEmpty || bytes + size <= limit else {
                carried = event
                break
            }
            guard size + ReplicationBatch.fixedSize <= limit else {
                throw ReplicationError.invalid(
                    "event \(event.sequence) has \(event.payload.count) bytes, more than one message to the cluster can carry")
            }
            chain.append(event)
            events.append(event)
            bytes += size
        }
        guard !events.isEmpty else { return nil }
        lastBatchFull = carried != nil || events.count == options.maxBatchEvents
        shared.withLock { $0.localEvents = max($0.localEvents, events[events.count - 1].sequence) }
        return ReplicationBatch(events: events, head: chain.head)
    }

    /// The photos events name (an erased event names none).
    static func photos(in events: [LogEvent]) -> [String] { scan(events).photos }

    /// What a batch's events name, decoded once: the photos (an erased event names none), and
    /// whether one is a `PlaceForgotten`, whose shipping asks for a rewrite of the stream.
    static func scan(_ events: [LogEvent]) -> (photos: [String], forgetsAPlace: Bool) {
        var photos: [String] = []
        var forgets = false
        for event in events where !event.isErased {
            guard let recorded = try? EventCodec.decode(event) else { continue }
            switch recorded.event {
            case .photoDownloaded(let photo): photos.append(photo.digest.description)
            case .placeForgotten: forgets = true
            default: break
            }
        }
        return (photos, forgets)
    }

    /// Puts each photo the batch names into the bucket, once: before the events, so that a
    /// restore of any acknowledged point finds its photos.
    func publish(_ batch: ReplicationBatch) async throws {
        let expected = shared.withLock { $0.record.streamSequence }
        let headers = try BatchHeader.make(batch, identity: identity)
        do {
            let ack = try await jetStream.publish(
                stream.subject, payload: batch.encoded(), messageID: "\(batch.firstSequence)-\(batch.lastSequence)",
                expectedLastSequence: expected, headers: headers)
            guard ack.stream == stream.name else {
                throw ReplicationError.conflict("the subject \(stream.subject) is captured by the stream \(ack.stream), not \(stream.name)")
            }
            // A duplicate is known by its message id, which names the events' numbers, not their
            // history: the message stored under it must end with this batch's head.
            if ack.duplicate { try await checkDuplicate(of: batch, at: ack.sequence) }
            acknowledged(batch, streamSequence: ack.sequence)
        } catch let error as JetStreamAPIError where error.isWrongLastSequence {
            // Our own publish landed and its answer was lost past the duplicate window, another
            // store shipping the same device's log came first, or someone wrote another history:
            // only the stream's last message can tell.
            try await settleRefusedPublish(of: batch, expected: expected)
        }
    }

    func acknowledged(_ batch: ReplicationBatch, streamSequence: UInt64) {
        noteAcknowledged(through: batch.lastSequence, head: batch.head, streamSequence: streamSequence)
        if ContinuousClock.now - lastSaved > .seconds(1) { try? saveRecord() }
    }

    /// Records that the stream holds the log through `last` (with `head` there), in its message
    /// `streamSequence`.
    func noteAcknowledged(through last: UInt64, head: ChainHash, streamSequence: UInt64) {
        let now = RFC3339.string(from: Date())
        shared.withLock {
            $0.record.acknowledgedEvent = last
            $0.record.streamSequence = streamSequence
            $0.record.head = head.description
            $0.record.acknowledgedAt = now
            $0.lastError = nil
        }
    }
}
