import BenchKit
import BlobStore
import FileIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Photo blobs: durable puts and gets of photo-sized blobs, and collecting many unused ones.
struct BlobCases {
    let options: Options
    let report: Report

    func run() throws {
        report.section("blobs")
        sync()  // the earlier cases' dirty pages are not this one's to write back
        let base = Measure.temporaryFolder("blobs")
        defer { try? FileManager.default.removeItem(atPath: base) }
        let size = 30_000
        let store = try BlobStore(directory: base + "/put")
        let photos = (0..<UInt64(options.photos)).map { Fixtures.photo(seed: $0, size: size) }
        var digests: [BlobDigest] = []
        let put = try Measure.seconds { for bytes in photos { digests.append(try store.put(bytes).digest) } }
        var total = 0
        let get = try Measure.seconds { for digest in digests { total += try store.get(digest)!.count } }
        precondition(total == photos.count * size, "a blob came back short")
        let count = Double(photos.count)
        let mebibytes = count * Double(size) / 1_048_576
        report.add(Row(what: "blob put, 30 KB photos, durable (hash, write, fsync, rename)",
                       ours: perSecond(count / put) + " (\(Figure.fixed(mebibytes / put)) MiB/s)"))
        report.add(Row(what: "blob get, 30 KB photos", ours: perSecond(count / get) + " (\(Figure.fixed(mebibytes / get)) MiB/s)"))

        for blobs in options.collections {
            let many = try BlobStore(directory: base + "/collect-\(blobs)")
            try layOut(blobs, in: many)
            let seconds = try Measure.seconds {
                let collected = try many.collect(roots: [NoRoots()], grace: .zero)
                precondition(collected.collected.count == blobs, "collection missed blobs")
            }
            report.add(Row(
                what: "collect \(Figure.grouped(Double(blobs))) unused blobs", ours: Figure.milliseconds(seconds),
                target: blobs == 100_000 ? "< 1 s" : "", verdict: blobs == 100_000 ? Target.atMost(seconds, 1) : nil))
        }
    }

    /// Lays small blobs out directly (how they got there is not what is measured).
    private func layOut(_ count: Int, in store: BlobStore) throws {
        let fileSystem = PosixFileSystem()
        for seed in 0..<UInt64(count) {
            let bytes = Fixtures.photo(seed: seed, size: 64)
            let path = store.path(of: BlobDigest.of(bytes))
            try fileSystem.createDirectory(Path.directory(of: path))
            let file = try fileSystem.openFile(path, .createOrTruncate)
            try file.write(bytes, at: 0)
            try file.close()
        }
    }
}

private struct NoRoots: BlobRoots {
    func referencedDigests() throws -> Set<BlobDigest> { [] }
    func isReferenced(_ digest: BlobDigest) -> Bool { false }
}
