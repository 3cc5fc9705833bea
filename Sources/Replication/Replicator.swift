import BlobStore
import EventLog
import FileIO
import Foundation
import NATSClient
import Synchronization
import VirtualTourist

/// Ships a store's events, in order and with the chain's head, into a JetStream stream, and its
/// photos into an Object Store bucket (docs/REPLICATION.md). It reads the log's files as any
/// reader does, so it never holds the store's writer back, and may run in the app's process
/// (`vt serve --replicate`) or beside it (`vt replicate`).
///
/// ```swift
/// let replicator = try await Replicator.start(store: "/albums", connection: nats)
/// try await replicator.run()          // until cancelled; or shipAvailable() once
/// ```
///
/// Exactly once: every batch has a message id (its first and last sequence), so a retried
/// publish is stored once, and an expected last stream sequence, so a batch lands only right
/// after the one before it — a second writer is fenced off with ``ReplicationError/conflict(_:)``.
public final class Replicator: @unchecked Sendable {
    public let storeFolder: String
    public let stream: ReplicationStream
    public let identity: LogIdentity
    /// Which of the store's logs this replicator ships, and how.
    let shipped: ShippedLog
    /// Whether any forget in the store asks for a rewrite (``ShippedLog/rewritesOnEveryForget``;
    /// set when a store of one device becomes one of several while it ships).
    let rewritesOnEveryForget: Atomic<Bool>
    let options: ReplicationOptions
    let connection: NATSConnection
    let jetStream: JetStream
    let bucket: ObjectStore
    let blobs: BlobStore
    let servers: String
    /// Confined to the store folder: its records are written without following a link.
    let fileSystem: any FileSystem
    let photoList: PhotoList
    let shared: Mutex<Shared>
    // Touched only by the shipping task (``shipAvailable()`` and ``run()`` never overlap).
    let reader: LogReader
    var cursor: LogCursor
    var chain: EventChain
    var pending: ReplicationBatch?
    /// An event read that did not fit the last batch: the next one starts with it.
    var carried: LogEvent?
    /// The chain before the batch in hand: where reading starts again when the batch is dropped.
    var chainBeforePending: EventChain
    /// How many forgets had begun in the store when the cursor was last opened (nil: open it
    /// again before the next read). See ``batchStillHolds()``.
    var forgetsRead: UInt64?
    /// A copy whose stream holds events past the copy's last (the device shipped them itself):
    /// the cursor is opened again once the copy reaches past them. See ``copyReachesPastStream()``.
    var streamAheadOfCopy = false
    /// Whether the last batch read from the log was as large as a message may be.
    var lastBatchFull = false
    /// Whether a photo missing from the uploaded list may be in the bucket all the same, so that
    /// an upload asks first: true for the first batch after a start (a crash may have come
    /// between an upload and its line in the list), and for good when the stream held events but
    /// the list was empty (it was lost).
    var photosInDoubt = true
    let photoListLost: Bool
    var lastSaved = ContinuousClock.now
    /// Held while shipping: one shipper a store and stream, across processes.
    var shippingLock: FileLock?
    /// The record as last written: an idle replicator writes it again only once it changed.
    var savedRecord: ReplicationRecord?

    struct Shared {
        var record: ReplicationRecord
        var uploaded: Set<String>
        var missing: Set<String> = []
        var localEvents: UInt64
        var lastError: String?
        var photosPending = 0
        var shipping = false
        var lastRewrite: RewriteReport?
    }

    /// Opens the store's log for reading, makes (or finds) the stream and the bucket, and checks
    /// that the stream holds a prefix of this store's history.
    ///
    /// - Throws: ``ReplicationError``: `.invalid` for a format-1 store or a bad stream name,
    ///   `.conflict` when the stream holds another history, `.cluster` when it cannot be reached.
    public static func start(
        store folder: String, connection: NATSConnection, servers: String, options: ReplicationOptions = ReplicationOptions()
    ) async throws -> Replicator {
        try refuseSeveralDevices(folder)
        return try await start(store: folder, shipping: ShippedLog(ownLogOf: folder), connection: connection, servers: servers, options: options)
    }

    /// Starts shipping one of the store's logs: its own, or a copy of another device's
    /// (``MapReplicator`` starts one for each).
    static func start(
        store folder: String, shipping shipped: ShippedLog, connection: NATSConnection, servers: String, options: ReplicationOptions
    ) async throws -> Replicator {
        let logPath = shipped.path
        let reader: LogReader
        let identity: LogIdentity
        do {
            reader = try LogReader(directory: logPath, payloadCodec: EventCodec.blockCodec)
            guard let found = try reader.identity() else {
                throw ReplicationError.invalid("the store at \(folder) has no log yet; open it once (vt pins) and replicate then")
            }
            identity = found
        } catch let error as LogError {
            throw ReplicationError.invalid("the store at \(folder) cannot be replicated: \(error.message)")
        }
        let stream = try options.stream.map(ReplicationStream.init(name:)) ?? ReplicationStream(for: identity)
        guard !stream.isSafetyCopy else {
            throw ReplicationError.invalid(
                "the stream name '\(stream.name)' ends in \(ReplicationStream.safetyCopySuffix), which is kept for a rewrite's safety copy; choose another")
        }
        let jetStream = JetStream(connection)
        let replicas = try await Self.makeStream(stream, jetStream: jetStream, options: options)
        let bucket = try await clusterCall("create the photo bucket \(stream.bucket)") {
            try await throughElection("create the photo bucket \(stream.bucket)", options: options) {
                try await ObjectStore.createOrLookUp(jetStream, bucket: stream.bucket, replicas: replicas)
            }
        }
        let fileSystem = PosixFileSystem().confined(to: folder)
        var old = try ReplicationRecord.load(store: folder, stream: stream.name, fileSystem: fileSystem)
        // While a rewrite replaces the stream, the stream is short or new: the record, checked
        // against the log, says where shipping stands, and the rewrite goes on first.
        let (acknowledged, streamSequence) =
            if let old, old.rewrite == .replace {
                try await resumeReplacing(old, stream: stream, jetStream: jetStream, reader: reader, store: folder, options: options)
            } else {
                try await reconcile(
                    stream, jetStream: jetStream, identity: identity, reader: reader, store: folder, isCopy: shipped.isCopy, options: options)
            }
        do {
            try fileSystem.createDirectoryDurably(ReplicationRecord.folder(ofStore: folder))
        } catch {
            throw ReplicationError.storage("cannot create \(ReplicationRecord.folder(ofStore: folder)): \(error)")
        }
        if streamSequence == 0, let shippedBefore = old, shippedBefore.streamSequence > 0, shippedBefore.rewrite != RewriteStep.replace {
            try await Self.waitOutRewrite(of: stream, shipped: shippedBefore.streamSequence, jetStream: jetStream, options: options)
        }
        if let was = old, let made = was.bucketCreated, let now = bucket.created, made != now {
            old = try Self.forgetUploads(was, stream: stream, store: folder, fileSystem: fileSystem, options: options)
        }
        let record = ReplicationRecord(
            stream: stream.name, servers: servers, acknowledgedEvent: acknowledged.sequence, streamSequence: streamSequence,
            head: acknowledged.hash.description, photosUploaded: old?.photosUploaded ?? 0, photosMissing: old?.photosMissing ?? 0,
            acknowledgedAt: old?.acknowledgedAt, rewrite: old?.rewrite, forgetsSeen: old?.forgetsSeen, bucketCreated: bucket.created)
        let blobs: BlobStore
        do { blobs = try BlobStore(directory: Path.join(folder, "blobs"), fileSystem: fileSystem) } catch {
            throw ReplicationError.storage("the photos of \(folder) cannot be read: \(error)")
        }
        return try Replicator(
            store: folder, stream: stream, identity: identity, shipped: shipped, options: options, connection: connection, jetStream: jetStream,
            bucket: bucket, blobs: blobs, servers: servers, reader: reader, record: record, acknowledged: acknowledged,
            fileSystem: fileSystem)
    }

    private init(
        store: String, stream: ReplicationStream, identity: LogIdentity, shipped: ShippedLog, options: ReplicationOptions, connection: NATSConnection,
        jetStream: JetStream, bucket: ObjectStore, blobs: BlobStore, servers: String, reader: LogReader, record: ReplicationRecord,
        acknowledged: LogHead, fileSystem: any FileSystem
    ) throws {
        storeFolder = store
        self.fileSystem = fileSystem
        self.stream = stream
        self.identity = identity
        self.shipped = shipped
        rewritesOnEveryForget = Atomic(shipped.rewritesOnEveryForget)
        self.options = options
        self.connection = connection
        self.jetStream = jetStream
        self.bucket = bucket
        self.blobs = blobs
        self.servers = servers
        self.reader = reader
        photoList = try PhotoList(store: store, stream: stream.name, fileSystem: fileSystem)
        let uploaded = ReplicationRecord.loadPhotos(store: store, stream: stream.name, fileSystem: fileSystem)
        photoListLost = uploaded.isEmpty && acknowledged.sequence > 0
        var record = record
        // The list is what the bucket has from this store; the record's count may lag it (a
        // kill between an upload's line and the record's next write).
        if !photoListLost { record.photosUploaded = uploaded.count }
        shared = Mutex(Shared(record: record, uploaded: uploaded, localEvents: acknowledged.sequence))
        cursor = try Self.storage { try reader.events(from: acknowledged.sequence + 1) }
        if shipped.isCopy { streamAheadOfCopy = acknowledged.sequence > (try Self.storage { try reader.lastSequence() }) }
        chain = EventChain(head: acknowledged.hash, after: acknowledged.sequence)
        chainBeforePending = chain
        try record.save(store: store, fileSystem: fileSystem)
        savedRecord = record
    }

    /// Where replication stands now. Reads the log's tail for its last event, with a reader of
    /// its own (the shipping task's reader is for that task alone): for a one-off look, such
    /// as `vt replicate --status`. Where the store is open, ``status(localEvents:)`` costs nothing.
    public var status: ReplicationStatus {
        let local = (try? LogReader(directory: reader.directory, payloadCodec: EventCodec.blockCodec).lastSequence()) ?? 0
        return status(localEvents: local)
    }

    /// Where replication stands now, given the local log's last event (the open store's last
    /// sequence): no read of the log. The web page polls this every few seconds, and reading a
    /// hot tail of up to a segment (64 MiB) each time cost CPU beside the app's commits.
    public func status(localEvents local: UInt64) -> ReplicationStatus {
        shared.withLock { shared in
            let acknowledged = shared.record.acknowledgedEvent
            let total = max(local, shared.localEvents)
            return ReplicationStatus(
                stream: stream.name, servers: servers, localEvents: total, acknowledgedEvents: acknowledged,
                lagEvents: total - min(total, acknowledged), photosUploaded: shared.record.photosUploaded,
                photosPending: shared.photosPending,
                photosMissing: shared.record.photosMissing, connected: connection.isConnected, lastError: shared.lastError,
                acknowledgedAt: shared.record.acknowledgedAt, rewrite: shared.record.rewrite)
        }
    }

    /// The last event the cluster acknowledged. Cheap, unlike ``status``, which reads the log's
    /// tail for its last sequence: for polling many times a second.
    public var acknowledgedEvents: UInt64 { shared.withLock { $0.record.acknowledgedEvent } }

    /// Ships every event the log holds now, retrying failures of the cluster for up to
    /// ``ReplicationOptions/giveUpAfter``; returns the status after.
    @discardableResult
    public func shipAvailable(progress: (@Sendable (ReplicationStatus) -> Void)? = nil) async throws -> ReplicationStatus {
        try claim()
        defer { unclaim() }
        var failingSince: ContinuousClock.Instant? = nil
        while true {
            do {
                guard try await shipNext() else { break }
                failingSince = nil
                if let progress, shared.withLock({ $0.record.acknowledgedEvent }) & 0x3FFF < UInt64(options.maxBatchEvents) {
                    progress(status)
                }
            } catch let error where Self.isTransient(error) {
                let since = failingSince ?? .now
                failingSince = since
                note(error)
                guard ContinuousClock.now - since < options.giveUpAfter else {
                    throw ReplicationError.cluster("the cluster did not accept events for \(options.giveUpAfter): \(error)")
                }
                try await Task.sleep(for: options.retryDelay)
            }
        }
        try saveRecord()
        return status
    }

    /// Ships continuously until the task is cancelled: new events within ``ReplicationOptions/pollInterval``
    /// of their commit, at most one message that is not full per ``ReplicationOptions/linger``;
    /// failures of the cluster are retried for as long as it takes (the status
    /// shows the lag and the last error meanwhile). Throws only what retrying cannot cure: a
    /// conflict, a damaged log.
    public func run() async throws {
        try claim()
        defer { unclaim() }
        while !Task.isCancelled {
            do {
                if try await shipNext() {
                    if !lastBatchFull { try await Task.sleep(for: options.linger) }
                    continue
                }
                // Caught up: write the record if it changed, at most once a second. Each write
                // is synced, and one per poll would compete with the app's own commits.
                if ContinuousClock.now - lastSaved >= .seconds(1) { try saveRecordIfChanged() }
                try await Task.sleep(for: options.pollInterval)
            } catch is CancellationError {
                break
            } catch let error where Self.isTransient(error) {
                note(error)
                try await throwIfStreamIsGone(after: error)
                try? await Task.sleep(for: options.retryDelay)
            }
        }
        try? saveRecordIfChanged()
    }

    /// A publish that nobody answers may mean an election, or that the stream is gone (the
    /// cluster lost its storage, or someone deleted it), which no retry here cures: then a
    /// `.cluster` error, after which a sync starts again and makes the stream anew
    /// (``emptyStreamError(_:jetStream:shipped:)``).
    private func throwIfStreamIsGone(after error: any Error) async throws {
        guard case NATSError.noResponders = error else { return }
        do { _ = try await StreamReading.info(stream, jetStream: jetStream) } catch ReplicationError.streamNotFound(_) {
            throw ReplicationError.cluster(
                "the stream \(stream.name) is gone from the cluster (its storage lost, or deleted); starting again makes it and ships the log into it")
        } catch {
            return
        }
    }

    private func claim() throws {
        let free = shared.withLock { shared in
            defer { shared.shipping = true }
            return !shared.shipping
        }
        guard free else { throw ReplicationError.invalid("this replicator is already shipping") }
        // One shipper a store and stream across processes too (`vt serve --replicate` beside a
        // `vt replicate`): two would share one record, and a rewrite's steps would cross.
        let path = Path.join(ReplicationRecord.folder(ofStore: storeFolder), stream.name + ".lock")
        do {
            shippingLock = try FileLock.acquire(at: path, holder: "pid=\(ProcessInfo.processInfo.processIdentifier)")
        } catch let held as LockHeldError {
            shared.withLock { $0.shipping = false }
            throw ReplicationError.invalid(
                "another replicator (\(held.holder)) is shipping \(storeFolder) to stream \(stream.name); stop it first, or let it ship")
        } catch {
            shared.withLock { $0.shipping = false }
            throw ReplicationError.storage("cannot lock \(path): \(error)")
        }
    }

    private func unclaim() {
        shippingLock?.release()
        shippingLock = nil
        shared.withLock { $0.shipping = false }
    }

    private func note(_ error: any Error) {
        shared.withLock { $0.lastError = "\(error)" }
    }

    func saveRecord() throws {
        lastSaved = .now
        let record = shared.withLock { $0.record }
        try record.save(store: storeFolder, fileSystem: fileSystem)
        savedRecord = record
    }

    private func saveRecordIfChanged() throws {
        if shared.withLock({ $0.record }) != savedRecord { try saveRecord() }
    }

    static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case ReplicationError.forgetting, ReplicationError.rewriting: true
        case is ReplicationError: false
        case is CancellationError: false
        case let error as NATSError:
            switch error {
            case .invalidURL, .authorizationViolation, .tls, .invalidArgument, .payloadTooLarge: false
            default: true
            }
        default: true  // JetStream's own errors during an election (no leader, not current) pass
        }
    }

    static func storage<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as LogError {
            throw ReplicationError.storage("the log cannot be read: \(error.message)")
        }
    }
}
