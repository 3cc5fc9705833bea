import FileIO
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a ``BlobStore`` accepts bytes and collects garbage.
public struct BlobStoreOptions: Sendable {
    /// The largest blob accepted, in bytes.
    public var maxBlobSize = 20 << 20
    /// The media types accepted, sniffed from the bytes; nil accepts any bytes.
    public var acceptedTypes: Set<MediaType>? = MediaType.photos
    /// How long an unreferenced blob (or a temporary file) is kept before collection may take
    /// it, unless a collection asks for another grace period.
    public var grace: Duration = .seconds(600)

    public init() {}
}

/// Content-addressed storage: files named by the SHA-256 of their bytes (docs/FORMAT.md,
/// "Blob folder"), written durably, and collected when nothing refers to them (docs/BLOBS.md).
///
/// ```swift
/// let blobs = try BlobStore(directory: "/store/blobs")
/// let lease = try blobs.put(jpegBytes)      // durable on return; protected from collection
/// try await appendTheEventThatNamesIt(lease.digest)
/// lease.release()                           // from now on the event's projection is its root
/// let bytes = try blobs.get(lease.digest)
/// ```
///
/// It knows bytes, hashes, files and roots handed to it; nothing of photos or events.
/// `Sendable`: puts, gets and a collection may run at the same time.
public final class BlobStore: Sendable {
    /// The folder (`…/blobs`).
    public let directory: String
    /// Where blobs live: `directory/sha256`.
    let root: String
    let fileSystem: any FileSystem
    public let options: BlobStoreOptions

    struct Guarded {
        /// Digests a caller holds a lease on: put but maybe not yet referenced.
        var leases: [BlobDigest: Int] = [:]
        /// Temporary files being written right now.
        var writing: Set<String> = []
        /// Whether this process has made sure the fan-out folder's name is durable.
        var folderIsDurable = false
    }

    /// One lock per fan-out folder: it serializes "take a lease" against "check, then delete"
    /// for the digests of that folder (see docs/BLOBS.md, "Races"), while collections of
    /// different folders run in parallel.
    final class Stripe: Sendable {
        let guarded = Mutex(Guarded())
    }

    let stripes: [Stripe] = (0..<256).map { _ in Stripe() }

    /// The stripe of a digest: its first byte, which is also its fan-out folder.
    func stripe(_ digest: BlobDigest) -> Stripe { stripes[Int(digest.firstByte)] }

    public init(directory: String, fileSystem: any FileSystem = PosixFileSystem(), options: BlobStoreOptions = BlobStoreOptions()) throws {
        let fileSystem = fileSystem.confined(to: directory)
        self.directory = directory
        self.root = Path.join(directory, "sha256")
        self.fileSystem = fileSystem
        self.options = options
        do { try fileSystem.createDirectoryDurably(root) } catch { throw BlobError.io(error, "create \(root)") }
    }

    /// The file a digest is stored in (whether or not it is there).
    public func path(of digest: BlobDigest) -> String {
        let hex = digest.description
        return Path.join(Path.join(root, String(hex.prefix(2))), String(hex.dropFirst(2)))
    }

    /// Parses a digest given as text (from a URL or a command line).
    ///
    /// - Throws: ``BlobError/Code/invalidDigest`` for anything but 64 hexadecimal digits.
    public static func digest(parsing text: String) throws -> BlobDigest {
        guard let digest = BlobDigest(hex: text) else {
            throw BlobError(.invalidDigest, "\"\(text.prefix(80))\" is not a SHA-256 digest (64 hexadecimal digits)")
        }
        return digest
    }

    /// Stores `bytes` durably and returns a lease that keeps them from collection until it is
    /// released. Bytes already stored are checked and their time refreshed instead.
    ///
    /// - Throws: ``BlobError`` `.tooLarge`, `.unacceptableType` (nothing is written), `.io`.
    public func put(_ bytes: [UInt8]) throws -> BlobLease {
        guard bytes.count <= options.maxBlobSize else {
            throw BlobError(.tooLarge, "\(bytes.count) bytes is over the \(options.maxBlobSize)-byte limit")
        }
        let type = MediaType.sniff(bytes)
        if let accepted = options.acceptedTypes, !(type.map(accepted.contains) ?? false) {
            let what = type?.rawValue ?? (bytes.prefix(256).contains(UInt8(ascii: "<")) ? "text (an HTML or XML page?)" : "an unknown format")
            throw BlobError(.unacceptableType, "the bytes are \(what), not one of \(accepted.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        let digest = BlobDigest.of(bytes)
        let lease = BlobLease(store: self, digest: digest, byteCount: bytes.count, mediaType: type)
        do {
            lease.wasAlreadyStored = try store(bytes, as: digest)
        } catch {
            lease.release()
            throw error
        }
        return lease
    }

    /// The stored bytes, or nil when the digest is not stored.
    public func get(_ digest: BlobDigest) throws -> [UInt8]? {
        let path = path(of: digest)
        do {
            // One open, not a look and then an open: each walks the confined path.
            return try fileSystem.openFile(path, .readOnly).readAll()
        } catch let error as IOError where error.code == ENOENT {
            return nil
        } catch {
            throw BlobError.io(error, "read the blob \(digest)")
        }
    }

    public func contains(_ digest: BlobDigest) throws -> Bool {
        do { return try fileSystem.status(path(of: digest)) != nil } catch {
            throw BlobError.io(error, "look for the blob \(digest)")
        }
    }

    func acquire(_ digest: BlobDigest) { stripe(digest).guarded.withLock { $0.leases[digest, default: 0] += 1 } }

    func releaseLease(_ digest: BlobDigest) {
        stripe(digest).guarded.withLock { guarded in
            let remaining = guarded.leases[digest, default: 1] - 1
            guarded.leases[digest] = remaining > 0 ? remaining : nil
        }
    }

    /// Writes the blob file unless an intact one is there; returns whether it was.
    private func store(_ bytes: [UInt8], as digest: BlobDigest) throws -> Bool {
        let final = path(of: digest)
        let folder = Path.directory(of: final)
        let stripe = stripe(digest)
        do {
            // Once per folder and process: its name must be durable before a blob in it is
            // (it may have been made by a process that died before syncing the root).
            try stripe.guarded.withLock { guarded in
                guard !guarded.folderIsDurable else { return }
                try fileSystem.createDirectory(folder)
                try fileSystem.syncDirectory(root)
                guarded.folderIsDurable = true
            }
        } catch {
            throw BlobError.io(error, "create \(folder)")
        }
        if let existing = try? fileSystem.openFile(final, .readOnly) {
            defer { try? existing.close() }
            if let stored = try? existing.readAll(), stored == bytes {
                do {
                    try fileSystem.setModificationTime(final, to: nil)
                    // Its writer may have died between the rename and the folder's sync.
                    try fileSystem.syncDirectory(folder)
                } catch {
                    throw BlobError.io(error, "refresh the blob \(digest)")
                }
                return true
            }
            // A damaged copy: the write below replaces it.
        }
        let temporary = Path.join(folder, ".\(Path.name(of: final))-\(UInt32.random(in: 0...UInt32.max)).tmp")
        stripe.guarded.withLock { _ = $0.writing.insert(temporary) }
        defer { stripe.guarded.withLock { _ = $0.writing.remove(temporary) } }
        do {
            try fileSystem.writeAtomically(bytes, to: final, through: temporary)
        } catch {
            throw BlobError.io(error, "store the blob \(digest)")
        }
        return false
    }
}

/// A claim on a stored blob: while any lease on a digest is held, collection never deletes it.
/// Hold it from `put` until the event that names the blob is appended; then release it (or let
/// it go: it releases itself when dropped).
public final class BlobLease: @unchecked Sendable {
    public let digest: BlobDigest
    public let byteCount: Int
    /// The sniffed type (nil when the store accepts any bytes and these were none of its kinds).
    public let mediaType: MediaType?
    /// True when the bytes were already stored (they were checked and their time refreshed).
    public internal(set) var wasAlreadyStored = false
    private let store: BlobStore
    private let released = Mutex(false)

    init(store: BlobStore, digest: BlobDigest, byteCount: Int, mediaType: MediaType?) {
        self.store = store
        self.digest = digest
        self.byteCount = byteCount
        self.mediaType = mediaType
        store.acquire(digest)
    }

    deinit { release() }

    /// Ends the claim. Calling it again does nothing.
    public func release() {
        let first = released.withLock { done in
            defer { done = true }
            return !done
        }
        if first { store.releaseLease(digest) }
    }
}
