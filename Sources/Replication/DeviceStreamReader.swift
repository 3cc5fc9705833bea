import BlobStore
import DeviceLogs
import EventLog
import NATSClient
import VirtualTourist

/// Reads one device's stream (`VT_<device id>`) from after what a store holds of that device's
/// log, each message checked against the chain as a restore checks it: what a sync through the
/// cluster takes from the other devices (docs/SYNC.md). It reads and checks; the caller takes.
///
/// ```swift
/// let reader = try await DeviceStreamReader.open(jetStream: js, device: phone, after: copyHead, identity: copyIdentity)
/// for batch in try await reader!.next(expires: .milliseconds(500)) { try await store.take(batch.events, …) }
/// ```
public final class DeviceStreamReader: @unchecked Sendable {
    /// A message's new events, checked, with the head after them and the log they belong to.
    public struct Batch: Sendable {
        public var events: [LogEvent]
        public var head: LogHead
        public var identity: LogIdentity

        public init(events: [LogEvent], head: LogHead, identity: LogIdentity) {
            self.events = events
            self.head = head
            self.identity = identity
        }
    }

    public let device: DeviceID
    public let stream: ReplicationStream
    let jetStream: JetStream
    /// The head of the store's copy after an event it holds (a message can start inside it).
    let heldHead: @Sendable (UInt64) throws -> LogHead?
    // Touched by one task at a time: the sync's reader of this device.
    private var reading: StreamReading
    private var nextMessage: UInt64
    private var consumer: PullConsumer?
    private var bucket: PhotoBucket??
    /// The last event the stream was seen to hold.
    public private(set) var streamEvents: UInt64 = 0

    private init(
        device: DeviceID, stream: ReplicationStream, jetStream: JetStream, reading: StreamReading, nextMessage: UInt64,
        heldHead: @escaping @Sendable (UInt64) throws -> LogHead?
    ) {
        self.device = device
        self.heldHead = heldHead
        self.stream = stream
        self.jetStream = jetStream
        self.reading = reading
        self.nextMessage = nextMessage
    }

    deinit { if let consumer { Task { try? await consumer.delete() } } }

    /// A reader of `device`'s stream after `head` (nil: from its first event), whose log must be
    /// `identity` when given; nil when the cluster has no stream of the device.
    /// `heldHead` gives the head of the store's copy after any event it holds: a message that
    /// starts inside the copy (another store shipped the device's events in other batches) is
    /// rehashed from the copy's head before it.
    ///
    /// - Throws: ``ReplicationError`` `.conflict` when the stream ends before `head` (it is not
    ///   the history the store holds); `.cluster` when the cluster does not answer.
    public static func open(
        jetStream: JetStream, device: DeviceID, after head: LogHead?, identity: LogIdentity?,
        heldHead: @escaping @Sendable (UInt64) throws -> LogHead?
    ) async throws -> DeviceStreamReader? {
        let stream = try ReplicationStream(name: "VT_" + device.description)
        let info: StreamInfo
        do { info = try await StreamReading.info(stream, jetStream: jetStream) } catch ReplicationError.streamNotFound(_) {
            return nil
        }
        let last = try await StreamReading.lastBatch(of: stream, jetStream: jetStream)
        // A stream that ends before what the store holds of it, with the store's head where it
        // ends, is the same history cut short: its device ships into it again after the cluster
        // lost it (docs/SYNC.md, "Faults"). Read it once it is back past the store's copy.
        if let head, let last, last.summary.last < head.sequence,
            identity == nil || last.summary.identity == identity, try heldHead(last.summary.last)?.hash == last.summary.head
        {
            throw ReplicationError.rewriting(
                "the stream \(stream.name) holds events up to \(last.summary.last) of the \(head.sequence) this store holds of device \(device):"
                    + " it is being shipped again; reading it once it has more")
        }
        // An empty stream is read from its start: the device made it and ships into it soon.
        let next = try await Follower.locate(after: head?.sequence ?? 0, info: info, jetStream: jetStream, stream: stream)
        let reader = DeviceStreamReader(
            device: device, stream: stream, jetStream: jetStream,
            reading: StreamReading(jetStream: jetStream, stream: stream, identity: identity, after: head), nextMessage: next,
            heldHead: heldHead)
        if let last { reader.streamEvents = last.summary.last }
        return reader
    }

    /// The stream's last event now (asks the cluster), remembered in ``streamEvents``.
    @discardableResult
    public func lookAtEnd() async throws -> UInt64 {
        if let last = try await StreamReading.lastBatch(of: stream, jetStream: jetStream) { streamEvents = max(streamEvents, last.summary.last) }
        return streamEvents
    }

    /// The next messages' new events, checked; none when nothing came within `expires`. A
    /// consumer the cluster lost (an election, a stream rewritten by its device after a forget)
    /// is made again at the message due.
    ///
    /// - Throws: ``ReplicationError`` `.chainMismatch`, `.conflict`, `.malformedMessage` for a
    ///   message that does not check (nothing of it is given); the cluster's errors as they are.
    public func next(batch: Int = 64, expires: Duration) async throws -> [Batch] {
        do {
            if consumer == nil {
                consumer = try await jetStream.pullConsumer(stream: stream.name, from: .sequence(nextMessage), inactiveThreshold: .seconds(30))
            }
            // One message is waited for, and the rest that are there come at once: a message
            // is handed on as soon as it lands, and a backlog still travels in batches.
            var messages = try await consumer!.next(batch: 1, expires: expires, margin: .seconds(2))
            if !messages.isEmpty, batch > 1 { messages += try await consumer!.next(batch: batch - 1, noWait: true) }
            // A consumer goes with its stream: the device rewrote it after a forget (a pull from
            // a deleted consumer ends at once, empty). Read again from what the store holds.
            if messages.isEmpty, try await !consumer!.exists() {
                throw ReplicationError.rewriting("the stream \(stream.name) was deleted and made again (a rewrite after a forget); reading it again")
            }
            var batches: [Batch] = []
            for message in messages where message.streamSequence >= nextMessage {
                // A consumer made while the stream was shorter than its start begins at the end:
                // any gap is read again from the message due.
                guard message.streamSequence == nextMessage else {
                    throw ReplicationError.rewriting(
                        "the stream \(stream.name) gave message \(message.streamSequence) where \(nextMessage) was due; reading again from \(nextMessage)")
                }
                let held = reading.chain?.sequence ?? 0
                let summary = try BatchHeader.read(message.headers, where: "stream \(stream.name) message \(message.streamSequence)")
                if summary.first <= held, summary.last > held {
                    guard let before = try heldHead(summary.first - 1) else {
                        throw ReplicationError.chainMismatch("the copy of device \(device) lacks event \(summary.first - 1), which it held")
                    }
                    reading.reposition(after: before)
                }
                let events = try reading.events(of: message).filter { $0.sequence > held }
                nextMessage += 1
                guard !events.isEmpty, let chain = reading.chain, let identity = reading.identity else { continue }
                guard identity.logID == device.bytes else {
                    throw ReplicationError.conflict("the stream \(stream.name) holds the log \(identity.logIDHex), not device \(device)'s")
                }
                streamEvents = max(streamEvents, chain.sequence)
                batches.append(Batch(events: events, head: LogHead(sequence: chain.sequence, hash: chain.head), identity: identity))
            }
            return batches
        } catch {
            if let lost = consumer { Task { try? await lost.delete() } }
            consumer = nil
            throw error
        }
    }

    /// Whether `error` is one the cluster may get over (no answer, an election, a stream being
    /// rewritten), so that trying again later is right.
    public static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case ReplicationError.cluster, ReplicationError.streamNotFound: true
        case is DomainError: false
        default: Replicator.isTransient(error)
        }
    }

    /// The last event `device`'s stream holds (by its last message's headers); nil when the
    /// cluster has no stream of it, or an empty one.
    public static func lastEvent(jetStream: JetStream, device: DeviceID) async throws -> UInt64? {
        let stream = try ReplicationStream(name: "VT_" + device.description)
        do { return try await StreamReading.lastBatch(of: stream, jetStream: jetStream)?.summary.last } catch let error as JetStreamAPIError
            where error.errorCode == JetStreamAPIError.streamNotFound
        {
            return nil
        }
    }

    /// Fetches `digests` from the stream's bucket, up to `atOnce` at a time (each is a few round
    /// trips to the stream's leader), handing each photo found to `each` as it comes, one at a
    /// time; returns how many the bucket did not have.
    public func photos(
        _ digests: [PhotoDigest], atOnce: Int = 32, _ each: (PhotoDigest, [UInt8]) throws -> Void
    ) async throws -> Int {
        guard !digests.isEmpty else { return 0 }
        if bucket == nil { bucket = try await PhotoBucket.open(jetStream: jetStream, stream: stream) }
        guard let opened = bucket ?? nil else { return digests.count }
        var missing = 0
        try await withThrowingTaskGroup(of: (PhotoDigest, [UInt8]?).self) { group in
            var waiting = digests[...]
            func startNext() {
                guard let digest = waiting.popFirst() else { return }
                group.addTask { (digest, try await opened.get(digest)) }
            }
            for _ in 0..<max(1, atOnce) { startNext() }
            while let (digest, bytes) = try await group.next() {
                if let bytes { try each(digest, bytes) } else { missing += 1 }
                startNext()
            }
        }
        return missing
    }

    /// What the stream's bucket says of its device and the map's other devices (nil: nothing,
    /// a store of one device shipped it).
    public static func mapDevices(jetStream: JetStream, device: DeviceID) async throws -> (file: DeviceFile, devices: [DeviceID])? {
        try await mapDevices(jetStream: jetStream, stream: try ReplicationStream(name: "VT_" + device.description))
    }

    /// What the bucket of `stream` says of its device and the map (nil when it says nothing: a
    /// stream of a store of one device shipped before the buckets named their maps, or none).
    public static func mapDevices(jetStream: JetStream, stream: ReplicationStream) async throws -> (file: DeviceFile, devices: [DeviceID])? {
        guard let found = try await StreamRestore.devicesOfMap(jetStream: jetStream, stream: stream) else { return nil }
        return (found.file, found.devices)
    }
}
