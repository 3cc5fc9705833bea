import Dispatch
import FileIO
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What uses blobs: a projection whose state refers to some of them. Collection asks every
/// registered one.
public protocol BlobRoots: Sendable {
    /// Every digest in use. Throwing (the projection cannot be built) refuses the collection.
    func referencedDigests() throws -> Set<BlobDigest>
    /// Whether the digest is in use at this instant: asked again right before each delete.
    func isReferenced(_ digest: BlobDigest) -> Bool
}

/// What a collection found and did (or, for a dry run, would do).
public struct CollectionReport: Sendable, CustomStringConvertible {
    public var dryRun: Bool
    /// Blob files looked at.
    public var scanned = 0
    /// Blobs deleted (or that would be).
    public var collected: [BlobDigest] = []
    /// Their bytes.
    public var reclaimedBytes: Int64 = 0
    /// Blobs kept because a root refers to them, a lease protects them, or they are younger
    /// than the grace period.
    public var keptReferenced = 0
    public var keptLeased = 0
    public var keptInGrace = 0
    /// Temporary files of writes that crashed, deleted (or that would be).
    public var removedTemporaryFiles: [String] = []
    /// Files that are neither blobs nor temporary files; never touched.
    public var strayFiles: [String] = []

    public var description: String {
        "\(dryRun ? "would collect" : "collected") \(collected.count) blob(s), \(reclaimedBytes) bytes, and "
            + "\(removedTemporaryFiles.count) temporary file(s); kept \(keptReferenced) in use, \(keptLeased) being "
            + "stored, \(keptInGrace) within the grace period (of \(scanned) blobs)"
    }
}

extension BlobStore {
    /// Deletes blobs that no root uses and that are older than the grace period, and temporary
    /// files left by crashed writes (docs/BLOBS.md, "Collection").
    ///
    /// - Parameters:
    ///   - roots: every projection that uses blobs; if any cannot say what it uses, nothing is
    ///     deleted.
    ///   - grace: how old an unreferenced blob must be; the store's default when nil. Zero is
    ///     allowed when asked for.
    ///   - dryRun: list what would go, delete nothing.
    ///   - now: the time to measure ages from (seconds since 1970; the real clock when nil).
    /// - Throws: ``BlobError`` `.rootsUnavailable`, `.io`.
    /// Cost: one directory listing per fan-out folder, one `stat` per unreferenced blob, one
    /// `unlink` per blob collected.
    public func collect(
        roots: [any BlobRoots], grace: Duration? = nil, dryRun: Bool = false, now: Duration? = nil
    ) throws -> CollectionReport {
        let grace = grace ?? options.grace
        guard grace >= .zero else { throw BlobError(.io, "a grace period cannot be negative") }
        var referenced = Set<BlobDigest>()
        for provider in roots {
            do { referenced.formUnion(try provider.referencedDigests()) } catch {
                throw BlobError(
                    .rootsUnavailable, "collection refused: a projection cannot say which blobs it uses", cause: error)
            }
        }
        let now = now ?? Self.wallClock()
        let inUse = referenced
        let folders: [String]
        do { folders = try fileSystem.listDirectory(root).sorted() } catch { throw BlobError.io(error, "list \(root)") }
        // Fan-out folders are collected in parallel (deleting files is kernel work that scales
        // over cores on ext4: 100,000 unlinks took 1.17 s on one thread here, 0.55 s on two);
        // each folder's digests have their own lock.
        let parts = Mutex<[Result<CollectionReport, BlobError>?]>(Array(repeating: nil, count: folders.count))
        DispatchQueue.concurrentPerform(iterations: folders.count) { index in
            var part = CollectionReport(dryRun: dryRun)
            let outcome: Result<CollectionReport, BlobError>
            do {
                try collect(folder: folders[index], roots: roots, referenced: inUse, grace: grace, now: now, dryRun: dryRun, into: &part)
                outcome = .success(part)
            } catch {
                outcome = .failure(error as? BlobError ?? BlobError.io(error, "collect \(folders[index])"))
            }
            parts.withLock { $0[index] = outcome }
        }
        var report = CollectionReport(dryRun: dryRun)
        for part in parts.withLock({ $0 }) {
            guard let partial = try part?.get() else { continue }
            report.scanned += partial.scanned
            report.collected += partial.collected
            report.reclaimedBytes += partial.reclaimedBytes
            report.keptReferenced += partial.keptReferenced
            report.keptLeased += partial.keptLeased
            report.keptInGrace += partial.keptInGrace
            report.removedTemporaryFiles += partial.removedTemporaryFiles
            report.strayFiles += partial.strayFiles
        }
        return report
    }

    private func collect(
        folder: String, roots: [any BlobRoots], referenced: Set<BlobDigest>, grace: Duration, now: Duration,
        dryRun: Bool, into report: inout CollectionReport
    ) throws {
        let folderPath = Path.join(root, folder)
        guard folder.utf8.count == 2, let stripeIndex = UInt8(folder, radix: 16), folder == folder.lowercased() else {
            report.strayFiles.append(folderPath)
            return
        }
        let stripe = stripes[Int(stripeIndex)]
        // The folder is held open: each file is one lookup from it (under a confined file
        // system a path would be walked from the store's folder down, twice per file).
        let handle: any FolderHandle
        let names: [String]
        do {
            handle = try fileSystem.openFolder(folderPath)
            names = try handle.names()
        } catch {
            throw BlobError.io(error, "list \(folderPath)")
        }
        for name in names.sorted() {
            if name.hasPrefix("."), name.hasSuffix(".tmp") {
                try collectTemporary(name, in: handle, stripe: stripe, grace: grace, now: now, dryRun: dryRun, report: &report)
                continue
            }
            guard let digest = BlobDigest(hex: folder + name) else {
                report.strayFiles.append(Path.join(folderPath, name))
                continue
            }
            report.scanned += 1
            if referenced.contains(digest) {
                report.keptReferenced += 1
                continue
            }
            guard let status = try? handle.status(name) else { continue }
            if now - status.modificationTime < grace {
                report.keptInGrace += 1
                continue
            }
            // The final check and the delete happen under the folder's lock: a `put` of these
            // bytes either took its lease first (and the blob stays) or finds the file gone and
            // writes it again.
            let outcome: Outcome = try stripe.guarded.withLock { guarded in
                if guarded.leases[digest] != nil { return .leased }
                if roots.contains(where: { $0.isReferenced(digest) }) { return .referenced }
                if !dryRun, !(try removeIfPresent(name, in: handle)) { return .gone }
                return .collected
            }
            switch outcome {
            case .leased: report.keptLeased += 1
            case .referenced: report.keptReferenced += 1
            case .gone: break
            case .collected:
                report.collected.append(digest)
                report.reclaimedBytes += status.size
            }
        }
    }

    private enum Outcome { case leased, referenced, collected, gone }

    private func collectTemporary(
        _ name: String, in folder: any FolderHandle, stripe: Stripe, grace: Duration, now: Duration, dryRun: Bool,
        report: inout CollectionReport
    ) throws {
        let path = Path.join(folder.path, name)
        guard let status = try? folder.status(name), now - status.modificationTime >= grace else { return }
        let removed: Bool = try stripe.guarded.withLock { guarded in
            guard !guarded.writing.contains(path) else { return false }
            if dryRun { return true }
            return try removeIfPresent(name, in: folder)
        }
        if removed { report.removedTemporaryFiles.append(path) }
    }

    /// Deletes one blob now, whatever the retention window (forgetting a place), and makes the
    /// deletion durable; false when it was not stored.
    public func remove(_ digest: BlobDigest) throws -> Bool {
        let file = path(of: digest)
        let removed = try removeIfPresent(file) { try fileSystem.removeFile(file) }
        if removed {
            let folder = Path.directory(of: file)
            do { try fileSystem.syncDirectory(folder) } catch { throw BlobError.io(error, "sync \(folder)") }
        }
        return removed
    }

    /// Deletes `path`; false when it is already gone. A temporary file seen in the listing may
    /// have been renamed into place by its `put` before the folder's lock was taken, and another
    /// collection may have taken a blob first: neither is a failure.
    private func removeIfPresent(_ name: String, in folder: any FolderHandle) throws -> Bool {
        try removeIfPresent(Path.join(folder.path, name)) { try folder.removeFile(name) }
    }

    private func removeIfPresent(_ path: @autoclosure () -> String, by removing: () throws -> Void) throws -> Bool {
        do {
            try removing()
            return true
        } catch let error as IOError where error.code == ENOENT {
            return false
        } catch {
            throw BlobError.io(error, "delete \(path())")
        }
    }

    /// The wall clock, as file times are kept.
    static func wallClock() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }
}

extension BlobStore {
    /// Every blob file present, by digest, in digest order (temporary and stray files left
    /// out). Cost: one listing per fan-out folder.
    public func storedBlobs() throws -> [(digest: BlobDigest, path: String)] {
        var blobs: [(digest: BlobDigest, path: String)] = []
        do {
            for folder in try fileSystem.listDirectory(root).sorted() where folder.utf8.count == 2 {
                for name in try fileSystem.listDirectory(Path.join(root, folder)).sorted() {
                    if let digest = BlobDigest(hex: folder + name) { blobs.append((digest, Path.join(Path.join(root, folder), name))) }
                }
            }
        } catch {
            throw BlobError.io(error, "list \(root)")
        }
        return blobs
    }
}

/// What re-hashing every stored blob found.
public struct BlobVerification: Sendable {
    public struct Mismatch: Sendable, Hashable {
        public var path: String
        public var expected: BlobDigest
        public var actual: BlobDigest
    }

    public var checked = 0
    public var bytes: Int64 = 0
    /// Blob files whose bytes no longer hash to their name.
    public var mismatches: [Mismatch] = []
    public var isClean: Bool { mismatches.isEmpty }
}

extension BlobStore {
    /// Re-hashes every stored blob. `progress` is called with (blobs checked, blobs in all).
    public func verify(progress: ((Int, Int) -> Void)? = nil) throws -> BlobVerification {
        let paths = try storedBlobs()
        var result = BlobVerification()
        for (index, (digest, path)) in paths.enumerated() {
            let bytes: [UInt8]
            do { bytes = try fileSystem.openFile(path, .readOnly).readAll() } catch {
                if (try? fileSystem.status(path)) == nil { continue }  // collected meanwhile
                throw BlobError.io(error, "read \(path)")
            }
            result.checked += 1
            result.bytes += Int64(bytes.count)
            let actual = BlobDigest.of(bytes)
            if actual != digest { result.mismatches.append(.init(path: path, expected: digest, actual: actual)) }
            if index % 256 == 0 { progress?(index, paths.count) }
        }
        progress?(paths.count, paths.count)
        return result
    }
}
