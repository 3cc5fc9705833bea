import BlobStore
import EventLog

/// Photos' bytes, and their garbage collection (docs/BLOBS.md).
extension TouristStore {
    /// Stores a downloaded image: checked (size, and a JPEG, PNG, GIF or WebP signature; never
    /// an HTML error page) and written durably. The lease keeps it from collection until
    /// ``recordDownload(_:pin:collection:slot:cause:)`` has recorded it.
    public func storePhoto(_ bytes: [UInt8]) throws -> BlobLease {
        do { return try blobs.put(bytes) } catch let error as BlobError {
            let code: DomainError.Code = error.code == .io ? .storage : .invalidArgument
            throw DomainError(code, "the image was not stored: \(error.message)", cause: error)
        }
    }

    /// Says to every subscriber of ``changes()`` that these photos' bytes are stored now: a sync
    /// that takes another device's events shows them at once and fetches their photos after, so
    /// an open album asked for an image before it was there (docs/SYNC.md).
    public func photosArrived(_ digests: Set<PhotoDigest>) { processor.announce(photos: digests) }

    /// Records a downloaded photo from its lease (so the bytes are stored before the event
    /// that names them is appended), then releases the lease.
    @discardableResult
    public func recordDownload(_ lease: BlobLease, pin: PinID, collection: UInt32, slot: UInt32, cause: UInt64?) async throws
        -> RecordedEvent
    {
        defer { lease.release() }
        let photo = DownloadedPhoto(
            pin: pin, collection: collection, slot: slot, digest: lease.digest, byteCount: UInt64(lease.byteCount),
            mediaType: lease.mediaType?.rawValue ?? "application/octet-stream")
        return try await recordDownload(photo, cause: cause)
    }

    /// A photo's image bytes, or nil when they are not stored (never downloaded, or collected:
    /// time travel past the retention window finds photos whose images were collected).
    public func photoBytes(_ digest: PhotoDigest) throws -> [UInt8]? {
        do { return try blobs.get(digest) } catch { throw Self.storageError(error, "the image \(digest) cannot be read") }
    }

    /// Whether a photo's image is stored.
    public func isPhotoStored(_ digest: PhotoDigest) throws -> Bool {
        do { return try blobs.contains(digest) } catch { throw Self.storageError(error, "the image \(digest) cannot be found") }
    }

    /// Whether an event at `time` lies within the retention window (time travel shows what an
    /// album showed then, so the images downloaded since are kept).
    public func isWithinRetention(_ time: LogTimestamp) -> Bool {
        let seconds = options.retention.components.seconds
        guard options.retention > .zero else { return false }
        let span = seconds > Int64.max / 1_000_000 ? Int64.max : seconds * 1_000_000
        return time >= options.log.clock.now().adding(microseconds: -span)
    }

    /// The images this store keeps: every one its albums show now, and every one an album showed
    /// at some moment of the retention window (time travel shows them). What a whole copy of the
    /// store needs: a restore fetches these.
    public func keptPhotos() throws -> Set<PhotoDigest> {
        do { return state.referencedDigests.union(try retentionRoots().window()) } catch {
            throw Self.storageError(error, "the photos kept for the retention window cannot be listed")
        }
    }

    /// Deletes images that no album uses, now or within the retention window, and that are
    /// older than the grace period; a dry run only lists them.
    public func collectGarbage(grace: Duration? = nil, dryRun: Bool = false) throws -> CollectionReport {
        try Self.collect(processor: processor, blobs: blobs, roots: retentionRoots(), grace: grace, dryRun: dryRun)
    }

    /// The images in use: those of the current state, plus every one referenced at some moment
    /// of the retention window — the ones referenced at its start, and every one downloaded
    /// since.
    func retentionRoots() -> StoreBlobRoots {
        let window = options.retention
        return StoreBlobRoots(processor: processor) { [self] in
            guard window > .zero else { return [] }
            let seconds = window.components.seconds
            let now = options.log.clock.now()
            let start = try sequence(atTime: now.adding(microseconds: -(seconds > Int64.max / 1_000_000 ? Int64.max : seconds * 1_000_000)))
            var digests = try state(at: start).referencedDigests
            try forEachEvent(from: start + 1, through: lastSequence, doing: "the retention window cannot be read") {
                if case .photoDownloaded(let photo) = $0.event { digests.insert(photo.digest) }
            }
            return digests
        }
    }

    static func collect(
        processor: ActionProcessor, blobs: BlobStore, roots: StoreBlobRoots, grace: Duration?, dryRun: Bool
    ) throws -> CollectionReport {
        do { return try blobs.collect(roots: [roots], grace: grace, dryRun: dryRun) } catch {
            throw storageError(error, "unused images could not be collected")
        }
    }

    /// The outcome of the store's last automatic collection, if one ran.
    public var lastAutomaticCollection: Result<CollectionReport, DomainError>? {
        automaticCollection.withLock { $0.last }
    }

    /// Starts the store's own collector: every `interval` while open. It holds the store
    /// weakly, so a store that is let go still goes away. A failure is not fatal (the next
    /// round tries again) and is kept in ``lastAutomaticCollection``.
    func startCollecting(every interval: Duration) {
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                guard let self else { return }
                let outcome: Result<CollectionReport, DomainError>
                do { outcome = .success(try self.collectGarbage()) } catch {
                    outcome = .failure(error as? DomainError ?? DomainError(.storage, "collection failed", cause: error))
                }
                self.automaticCollection.withLock { $0.last = outcome }
            }
        }
        automaticCollection.withLock { $0.task = task }
    }

    /// Stops the collector and waits for a round in progress.
    func stopCollecting() async {
        let task = automaticCollection.withLock { state in
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
        await task?.value
    }
}

/// The automatic collector's task and last outcome.
struct AutomaticCollection: Sendable {
    var task: Task<Void, Never>?
    var last: Result<CollectionReport, DomainError>?
}

/// The roots of the store's blobs: the live state's photos, checked afresh before each delete,
/// and the retention window's, computed when the collection starts.
final class StoreBlobRoots: BlobRoots {
    let processor: ActionProcessor
    let window: @Sendable () throws -> Set<PhotoDigest>
    private let computedWindow = Mutex<Set<PhotoDigest>>([])

    init(processor: ActionProcessor, window: @escaping @Sendable () throws -> Set<PhotoDigest>) {
        self.processor = processor
        self.window = window
    }

    func referencedDigests() throws -> Set<PhotoDigest> {
        let inWindow = try window()
        computedWindow.withLock { $0 = inWindow }
        return processor.published.referencedDigests.union(inWindow).union(processor.unconfirmedDigests)
    }

    func isReferenced(_ digest: PhotoDigest) -> Bool {
        processor.published.photoReferences[digest] != nil || computedWindow.withLock { $0.contains(digest) }
            || processor.unconfirmedDigests.contains(digest)
    }
}

import Synchronization

extension TouristStore {
    /// Writes a snapshot of the current state now, so the next open replays nothing (snapshots
    /// are otherwise written every ``StoreOptions/snapshotInterval`` events and on close).
    /// Returns the sequence number it covers.
    @discardableResult
    public func writeSnapshot() async throws -> UInt64 {
        do { return try await processor.snapshotNow() } catch {
            throw Self.storageError(error, "the snapshot of \(folder) cannot be written")
        }
    }
}
