import BlobStore
import NATSClient

extension Replicator {
    /// Uploads the photos a batch names (`named`) that the bucket has not had from this store,
    /// several at once (``ReplicationOptions/concurrentUploads``), all before the batch is
    /// published: a restore finds every photo an event names. A photo collected from the blob
    /// folder since (its album dropped it) is counted missing, as an import counts it.
    func uploadPhotos(_ named: [String]) async throws {
        let names = shared.withLock { shared in
            let names = named.filter { !shared.uploaded.contains($0) && !shared.missing.contains($0) }
            shared.photosPending = names.count
            return names
        }
        guard !names.isEmpty else { return }
        let ask = photosInDoubt
        try await withThrowingTaskGroup(of: (String, uploaded: Bool).self) { group in
            var waiting = names[...]
            func startNext() {
                guard let name = waiting.popFirst() else { return }
                group.addTask { (name, try await self.upload(name, askFirst: ask)) }
            }
            for _ in 0..<Self.uploadsAtOnce(photos: names.count, limit: options.concurrentUploads) { startNext() }
            while let (name, uploaded) = try await group.next() {
                if uploaded { try photoList.append(name) }
                shared.withLock {
                    if uploaded {
                        $0.uploaded.insert(name)
                        $0.record.photosUploaded += 1
                    } else {
                        $0.missing.insert(name)
                        $0.record.photosMissing += 1
                    }
                    $0.photosPending -= 1
                }
                startNext()
            }
        }
    }

    /// How many of a batch's `photos` to upload at once: an eighth of them, at least 4 and at
    /// most `limit`.
    ///
    /// ```swift
    /// Replicator.uploadsAtOnce(photos: 45, limit: 32)     // 6: a live batch, the app committing
    /// Replicator.uploadsAtOnce(photos: 3_700, limit: 32)  // 32: a backlog
    /// ```
    ///
    /// Every upload is a round of consensus on the cluster's servers, and where they share the
    /// app's cores a burst of them is what stretched its slowest commits (docs/REPLICATION.md,
    /// "Where the p99 goes"); a few at a time spread the same work out. The rule steers itself:
    /// a replicator that falls behind reads larger batches, which upload more at once.
    static func uploadsAtOnce(photos: Int, limit: Int) -> Int {
        min(max(1, limit), max(4, (photos + 7) / 8))
    }

    /// Puts one photo into the bucket (unless it is there, when `askFirst`); false when the blob
    /// folder no longer has it.
    private func upload(_ name: String, askFirst: Bool) async throws -> Bool {
        guard let digest = BlobDigest(hex: name) else { return false }
        let bytes: [UInt8]?
        do { bytes = try blobs.get(digest) } catch {
            throw ReplicationError.storage("the photo \(name) cannot be read from \(storeFolder): \(error)")
        }
        guard let bytes else { return false }
        if askFirst { _ = try await bucket.putIfAbsent(name, data: bytes) } else { try await bucket.putNew(name, data: bytes) }
        return true
    }
}
