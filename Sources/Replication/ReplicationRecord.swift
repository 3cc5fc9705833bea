import FileIO
import Foundation

/// What a store remembers of its replication, in `<store>/replication/` (docs/REPLICATION.md,
/// "What the store remembers"): per stream, the last event the cluster acknowledged (JSON, replaced
/// atomically) and the photos already in the bucket (one digest a line, appended). The cluster
/// stays the authority: a replicator starting up checks this against the stream's last message.
public struct ReplicationRecord: Codable, Equatable, Sendable {
    public var stream: String
    /// The cluster's URLs, credentials replaced by `***`.
    public var servers: String
    public var acknowledgedEvent: UInt64
    public var streamSequence: UInt64
    /// The chain's head after `acknowledgedEvent`, in hex.
    public var head: String
    public var photosUploaded: Int
    public var photosMissing: Int
    /// When the cluster last acknowledged a batch (ISO 8601), nil before the first.
    public var acknowledgedAt: String?
    /// The step a rewrite of the stream is at (a forgotten place to take out of it), nil when
    /// none is under way (docs/REPLICATION.md, "Forgetting after shipping").
    public var rewrite: RewriteStep?
    /// In a store of several devices, how many forgets had begun in the store (its
    /// `forget.count`) when this stream was last known to hold nothing they erased: a count that
    /// moved since asks for a rewrite (docs/REPLICATION.md, "A store of several devices"). Nil
    /// in a store of one device, whose rewrites follow its own `PlaceForgotten`s.
    public var forgetsSeen: UInt64? = nil
    /// When the photo bucket was made, as the cluster said when this store last started
    /// shipping: a bucket made again since (the cluster lost its storage, or someone deleted it)
    /// holds none of the photos the list names, so the list is emptied and they go again. Nil
    /// in a record written before it was kept.
    public var bucketCreated: String? = nil

    /// The folder a store keeps its records in.
    public static func folder(ofStore store: String) -> String { Path.join(store, "replication") }

    static func path(store: String, stream: String) -> String { Path.join(folder(ofStore: store), stream + ".json") }
    static func photosPath(store: String, stream: String) -> String { Path.join(folder(ofStore: store), stream + ".photos") }

    /// The record of `stream` in `store`, nil when it never replicated there.
    public static func load(
        store: String, stream: String, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> ReplicationRecord? {
        let fileSystem = fileSystem.confined(to: store)
        let path = path(store: store, stream: stream)
        do {
            guard try fileSystem.exists(path) else { return nil }
            let file = try fileSystem.openFile(path, .readOnly)
            defer { try? file.close() }
            return try JSONDecoder().decode(ReplicationRecord.self, from: Data(try file.readAll()))
        } catch {
            throw ReplicationError.storage("\(path) cannot be read (\(error)); remove it and replication starts from what the cluster says")
        }
    }

    /// Every stream the store has replicated to.
    public static func all(store: String) throws -> [ReplicationRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(ofStore: store))) ?? []
        return try names.filter { $0.hasSuffix(".json") }.sorted().compactMap {
            try load(store: store, stream: String($0.dropLast(5)))
        }
    }

    func save(store: String, fileSystem: any FileSystem) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let path = Self.path(store: store, stream: stream)
        do {
            try fileSystem.writeAtomically(Array(try encoder.encode(self)) + [0x0A], to: path)
        } catch {
            throw ReplicationError.storage("cannot write \(path): \(error)")
        }
    }

    /// The digests listed as uploaded (a torn last line, from a crash, is ignored).
    static func loadPhotos(store: String, stream: String, fileSystem: any FileSystem = PosixFileSystem()) -> Set<String> {
        let fileSystem = fileSystem.confined(to: store)
        guard let file = try? fileSystem.openFile(photosPath(store: store, stream: stream), .readOnly) else { return [] }
        defer { try? file.close() }
        guard let bytes = try? file.readAll() else { return [] }
        let text = String(decoding: bytes, as: UTF8.self)
        return Set(text.split(separator: "\n").filter { $0.utf8.count == 64 }.map(String.init))
    }
}

/// Appends uploaded digests to the record's photo list, through the store's confined file
/// system (no link is followed).
final class PhotoList {
    private let path: String
    private let fileSystem: any FileSystem
    private var file: any RandomAccessFile
    private var end: Int64

    init(store: String, stream: String, fileSystem: any FileSystem) throws {
        path = ReplicationRecord.photosPath(store: store, stream: stream)
        self.fileSystem = fileSystem
        (file, end) = try Self.openForAppending(path, fileSystem)
    }

    private static func openForAppending(_ path: String, _ fileSystem: any FileSystem) throws -> (any RandomAccessFile, Int64) {
        do {
            let file = try fileSystem.exists(path) ? fileSystem.openFile(path, .readWrite) : fileSystem.openFile(path, .createNew)
            return (file, try file.size())
        } catch {
            throw ReplicationError.storage("cannot open \(path): \(error)")
        }
    }

    /// Writes the list again with just `digests` (replaced atomically), and appends after them.
    func replace(with digests: Set<String>, fileSystem: any FileSystem) throws {
        let text = digests.sorted().map { $0 + "\n" }.joined()
        do { try fileSystem.writeAtomically(Array(text.utf8), to: path) } catch {
            throw ReplicationError.storage("cannot write \(path): \(error)")
        }
        try? file.close()
        (file, end) = try Self.openForAppending(path, self.fileSystem)
    }

    func append(_ digest: String) throws {
        let line = Array((digest + "\n").utf8)
        do { try file.write(line, at: end) } catch {
            throw ReplicationError.storage("cannot note an uploaded photo: \(error)")
        }
        end += Int64(line.count)
    }

    deinit { try? file.close() }
}
