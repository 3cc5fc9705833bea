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

    /// The folder a store keeps its records in.
    public static func folder(ofStore store: String) -> String { Path.join(store, "replication") }

    static func path(store: String, stream: String) -> String { Path.join(folder(ofStore: store), stream + ".json") }
    static func photosPath(store: String, stream: String) -> String { Path.join(folder(ofStore: store), stream + ".photos") }

    /// The record of `stream` in `store`, nil when it never replicated there.
    public static func load(store: String, stream: String) throws -> ReplicationRecord? {
        let path = path(store: store, stream: stream)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(ReplicationRecord.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
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
    static func loadPhotos(store: String, stream: String) -> Set<String> {
        guard let text = try? String(contentsOfFile: photosPath(store: store, stream: stream), encoding: .utf8) else { return [] }
        return Set(text.split(separator: "\n").filter { $0.utf8.count == 64 }.map(String.init))
    }
}

/// Appends uploaded digests to the record's photo list.
final class PhotoList {
    private let path: String
    private var handle: FileHandle

    init(store: String, stream: String) throws {
        path = ReplicationRecord.photosPath(store: store, stream: stream)
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw ReplicationError.storage("cannot create \(path)")
            }
        }
        handle = try Self.openForAppending(path)
    }

    private static func openForAppending(_ path: String) throws -> FileHandle {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw ReplicationError.storage("cannot open \(path)") }
        handle.seekToEndOfFile()
        return handle
    }

    /// Writes the list again with just `digests` (replaced atomically), and appends after them.
    func replace(with digests: Set<String>, fileSystem: any FileSystem) throws {
        let text = digests.sorted().map { $0 + "\n" }.joined()
        do { try fileSystem.writeAtomically(Array(text.utf8), to: path) } catch {
            throw ReplicationError.storage("cannot write \(path): \(error)")
        }
        try? handle.close()
        handle = try Self.openForAppending(path)
    }

    func append(_ digest: String) throws {
        do { try handle.write(contentsOf: Array((digest + "\n").utf8)) } catch {
            throw ReplicationError.storage("cannot note an uploaded photo: \(error)")
        }
    }

    deinit { try? handle.close() }
}
