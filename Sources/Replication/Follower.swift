import BlobStore
import EventLog
import Foundation
import NATSClient
import Synchronization
import VirtualTourist

/// Where a follower stands.
public struct FollowStatus: Codable, Equatable, Sendable {
    public var stream: String
    public var servers: String
    /// Events the replica holds.
    public var events: UInt64
    /// The last event the stream was seen to hold.
    public var streamEvents: UInt64
    public var lagEvents: UInt64
    public var photos: Int
    public var missingPhotos: Int
    /// The original is rewriting the stream (a place was forgotten after it was shipped): the
    /// stream is missing or short for a while, and the replica waits.
    public var streamRewriting = false
    public var lastError: String?
}

/// A read-only replica kept live from a store's stream (docs/REPLICATION.md, "Follow"): the
/// store in `folder` (restored from the stream first when the folder is new or empty) refuses
/// every action, and takes each new message of the stream as it lands, checked against the head
/// shipped with it.
///
/// ```swift
/// let follower = try await Follower.start(connection: nats, stream: stream, folder: "/replica", servers: url)
/// let web = …(store: follower.store)    // albums and time travel, live
/// try await follower.run()              // until cancelled
/// ```
public final class Follower: @unchecked Sendable {
    public let store: TouristStore
    public let stream: ReplicationStream
    let jetStream: JetStream
    let servers: String
    let shared: Mutex<FollowStatus>
    /// Touched only by ``run()``.
    var reading: StreamReading
    var nextMessage: UInt64

    public static func start(
        connection: NATSConnection, stream: ReplicationStream, folder: String, servers: String,
        storeOptions: StoreOptions = StoreOptions(), progress: (@Sendable (String) -> Void)? = nil
    ) async throws -> Follower {
        let jetStream = JetStream(connection)
        if let devices = try await StreamRestore.devicesOfMap(jetStream: jetStream, stream: stream), devices.devices.count > 1 {
            // A replica takes its stream's events into its own log; a device of several also
            // needs the other devices' logs, live: a replica of the map (ClusterSync's
            // MapFollower, which vt follow starts for such a stream) takes them all.
            throw ReplicationError.invalid(
                "the stream \(stream.name) is one device's of a map of \(devices.devices.count) devices: a follower of one log would"
                    + " show this device's actions without the others'; a replica of the whole map (MapFollower, as vt follow makes it) takes every device's")
        }
        let isNew = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.isEmpty ?? true
        if isNew {
            progress?("restoring \(folder) from stream \(stream.name)…")
            let report = try await StreamRestore.restore(connection: connection, stream: stream, to: folder, waiting: progress)
            progress?("restored \(report.events) events and \(report.photos) photos")
        }
        var options = storeOptions
        options.createIfMissing = false
        options.replicaOf = "stream \(stream.name) on \(servers)"
        let store = try await TouristStore.open(at: folder, options: options)
        do {
            guard let identity = try store.logIdentity() else {
                throw ReplicationError.invalid("the store at \(folder) has a format-1 log; a replica is restored from the stream into a new folder")
            }
            guard let local = try store.head(at: store.lastSequence) else {
                throw ReplicationError.storage("the log of \(folder) does not reach its own last event")
            }
            // While the original replaces the stream it is missing or short of this replica.
            let next = try await StreamReplacement.reading(stream, jetStream: jetStream, progress: progress) {
                let info = try await StreamReading.info(stream, jetStream: jetStream)
                return try await locate(after: local.sequence, info: info, jetStream: jetStream, stream: stream)
            }
            let follower = Follower(
                store: store, stream: stream, jetStream: jetStream, servers: servers,
                reading: StreamReading(jetStream: jetStream, stream: stream, identity: identity, after: local), nextMessage: next)
            return follower
        } catch {
            try? await store.close()
            throw error
        }
    }

    private init(
        store: TouristStore, stream: ReplicationStream, jetStream: JetStream, servers: String, reading: StreamReading,
        nextMessage: UInt64
    ) {
        self.store = store
        self.stream = stream
        self.jetStream = jetStream
        self.servers = servers
        self.reading = reading
        self.nextMessage = nextMessage
        shared = Mutex(FollowStatus(
            stream: stream.name, servers: servers, events: store.lastSequence, streamEvents: store.lastSequence, lagEvents: 0,
            photos: 0, missingPhotos: 0, lastError: nil))
    }

    public var status: FollowStatus { shared.withLock { $0 } }

    /// The stream sequence of the message holding event `last + 1` (or the one after the
    /// stream's last message when the replica has every event), by a binary search on the
    /// messages' headers.
    static func locate(after last: UInt64, info: StreamInfo, jetStream: JetStream, stream: ReplicationStream) async throws -> UInt64 {
        guard last > 0, info.state.messages > 0 else { return max(1, info.state.firstSequence) }
        func summary(_ sequence: UInt64) async throws -> BatchHeader.Summary {
            let message = try await Replicator.clusterCall("read the stream \(stream.name)") {
                try await jetStream.message(stream: stream.name, sequence: sequence)
            }
            return try BatchHeader.read(message.headers, where: "stream \(stream.name) message \(sequence)")
        }
        var low = info.state.firstSequence, high = info.state.lastSequence
        let newest = try await summary(high)
        if newest.last == last { return high + 1 }
        guard newest.last > last else {
            throw ReplicationError.conflict(
                "this replica holds events up to \(last), the stream \(stream.name) only up to \(newest.last): it was not restored from this stream")
        }
        while low < high {
            let middle = low + (high - low) / 2
            if try await summary(middle).last <= last { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Follows the stream until the task is cancelled; failures of the cluster are retried (the
    /// status shows the last one). Throws what retrying cannot cure: a chain that does not
    /// match, a damaged message, a local store that cannot be written.
    public func run(pollExpiry: Duration = .milliseconds(500)) async throws {
        while !Task.isCancelled {
            do {
                let consumer = try await jetStream.pullConsumer(
                    stream: stream.name, from: .sequence(nextMessage), inactiveThreshold: .seconds(30))
                defer { Task { [consumer] in try? await consumer.delete() } }
                while !Task.isCancelled {
                    let messages = try await nextMessages(from: consumer, expires: pollExpiry)
                    for message in messages where message.streamSequence >= nextMessage {
                        // A consumer made while the stream was shorter than its start (empty,
                        // or being written back by a rewrite) starts at the stream's end instead:
                        // it hands over messages the replica has, passed over above, and never
                        // skips one. Any other gap: read again from the message due.
                        guard message.streamSequence == nextMessage else {
                            throw ReplicationError.rewriting(
                                "the stream \(stream.name) gave message \(message.streamSequence) where \(nextMessage) was due; reading again from \(nextMessage)")
                        }
                        try await apply(message)
                        nextMessage += 1
                    }
                    if messages.isEmpty { shared.withLock { $0.lagEvents = $0.streamEvents - min($0.streamEvents, $0.events) } }
                    if status.streamRewriting { try await lookForRewrite() }
                }
            } catch let error where Replicator.isTransient(error) && !(error is DomainError) {
                // The stream missing, a consumer gone: a rewrite on the original is no failure.
                var rewriting = false
                if Self.mayBeRewrite(error) { rewriting = (try? await lookForRewrite()) == true }
                if !rewriting { shared.withLock { $0.lastError = "\(error)" } }
                try? await Task.sleep(for: .milliseconds(250))
            } catch is CancellationError {
                break
            }
        }
    }

    /// Whether `error` is what a rewrite's replacement of the stream causes here: a consumer
    /// gone, a stream missing, a message out of place. Only then is the cluster asked (a check
    /// on every failure would slow the recovery from an election).
    private static func mayBeRewrite(_ error: any Error) -> Bool {
        if case ReplicationError.rewriting = error { return true }
        return (error as? JetStreamAPIError)?.errorCode == JetStreamAPIError.streamNotFound
    }

    /// Whether the original is replacing the stream now; notes it in the status.
    @discardableResult
    private func lookForRewrite() async throws -> Bool {
        let rewriting = try await StreamReplacement.underWay(on: stream, jetStream: jetStream) != nil
        shared.withLock {
            $0.streamRewriting = rewriting
            if rewriting { $0.lastError = nil }
        }
        return rewriting
    }

    /// The consumer's next messages. A consumer goes with its stream, and a rewrite on the
    /// original deletes the stream and makes it again; the server does not answer for a consumer
    /// that is gone, so a fetch that gets no answer in time looks whether the consumer is still
    /// there, to say why. Either way the failure goes up, and the caller makes a new consumer at
    /// the message it needs next (what the late fetch had delivered is not lost).
    private func nextMessages(from consumer: PullConsumer, expires: Duration) async throws -> [JetStreamMessage] {
        do {
            return try await consumer.next(batch: 64, expires: expires, margin: .seconds(2))
        } catch let error as NATSError {
            guard case .timeout = error, try await !consumer.exists() else { throw error }
            throw ReplicationError.rewriting(
                "the stream \(stream.name) was deleted and made again (a rewrite on the original); reading it again from message \(nextMessage)")
        }
    }

    private func apply(_ message: JetStreamMessage) async throws {
        let summary = try BatchHeader.read(message.headers, where: "stream \(stream.name) message \(message.streamSequence)")
        let local = store.lastSequence
        shared.withLock { $0.streamEvents = max($0.streamEvents, summary.last) }
        if summary.first <= local {
            // A replica restored to a point inside this message: rehash it from before it.
            guard let before = try store.head(at: summary.first - 1) else {
                throw ReplicationError.chainMismatch("the replica lacks event \(summary.first - 1)")
            }
            reading.reposition(after: before)
        }
        let events = try reading.events(of: message).filter { $0.sequence > local }
        guard !events.isEmpty else { return }
        let leases = try await fetchPhotos(named: events)
        defer { for lease in leases { lease.release() } }
        let head = try await store.appendReplicated(events)
        guard head.hash == reading.chain?.head, head.sequence == reading.chain?.sequence else {
            throw ReplicationError.chainMismatch(
                "after event \(head.sequence) this replica's chain differs from the stream's: its earlier events are not the stream's")
        }
        shared.withLock {
            $0.events = head.sequence
            $0.lagEvents = $0.streamEvents - min($0.streamEvents, head.sequence)
            $0.lastError = nil
        }
    }

    private func fetchPhotos(named events: [LogEvent]) async throws -> [BlobLease] {
        var leases: [BlobLease] = []
        var bucket: PhotoBucket?? = nil
        for name in Replicator.photos(in: events) {
            guard let digest = BlobDigest(hex: name), try !store.isPhotoStored(digest) else { continue }
            if bucket == nil { bucket = try await PhotoBucket.open(jetStream: jetStream, stream: stream) }
            if let bytes = try await bucket??.get(digest) {
                leases.append(try store.storePhoto(bytes))
                shared.withLock { $0.photos += 1 }
            } else {
                shared.withLock { $0.missingPhotos += 1 }
            }
        }
        return leases
    }

    /// Closes the replica's store.
    public func close() async throws { try await store.close() }
}
