// blob-bench: blob put and get throughput (photo-sized, durable), and the time to collect
// 100,000 blobs.
//
//   swift run -c release blob-bench            the full run
//   swift run -c release blob-bench --smoke    small sizes, for CI
import BlobStore
import FileIO
import Foundation
import LogWorkload
import Synchronization

let smoke = CommandLine.arguments.contains("--smoke")
let photos = smoke ? 100 : 2_000
let photoSize = 30_000
let collected = smoke ? 2_000 : 100_000

struct NoRoots: BlobRoots {
    func referencedDigests() throws -> Set<BlobDigest> { [] }
    func isReferenced(_ digest: BlobDigest) -> Bool { false }
}

struct AllRoots: BlobRoots {
    let all: Set<BlobDigest>
    func referencedDigests() throws -> Set<BlobDigest> { all }
    func isReferenced(_ digest: BlobDigest) -> Bool { all.contains(digest) }
}

func seconds(_ start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func photo(_ seed: UInt64, size: Int) -> [UInt8] {
    var random = SplitMix(seed: seed)
    return [0xFF, 0xD8, 0xFF, 0xE0] + (0..<size - 4).map { _ in UInt8.random(in: 0...255, using: &random) }
}

let base = NSTemporaryDirectory() + "vt-blob-bench-\(UUID().uuidString.prefix(8))"
defer { try? FileManager.default.removeItem(atPath: base) }
do {
    // Put: hash, write a temporary file, fsync, rename, fsync the folder.
    let store = try BlobStore(directory: base + "/put")
    let inputs = (0..<UInt64(photos)).map { photo($0, size: photoSize) }
    var start = ContinuousClock.now
    var digests: [BlobDigest] = []
    for bytes in inputs { digests.append(try store.put(bytes).digest) }
    let put = seconds(start)
    start = ContinuousClock.now
    for bytes in inputs { _ = try store.put(bytes) }
    let again = seconds(start)
    start = ContinuousClock.now
    var total = 0
    for digest in digests { total += try store.get(digest)!.count }
    let get = seconds(start)
    let mib = Double(photos * photoSize) / 1_048_576
    print("put (new, durable):     \(Int(Double(photos) / put)) blobs/s, \(String(format: "%.1f", mib / put)) MiB/s (\(photos) × \(photoSize) bytes)")
    print("put (already stored):   \(Int(Double(photos) / again)) blobs/s (checks the bytes, refreshes the time)")
    print("get:                    \(Int(Double(photos) / get)) blobs/s, \(String(format: "%.1f", mib / get)) MiB/s")

    // Collection: lay out many small blobs directly (the setup is not what is measured).
    let many = try BlobStore(directory: base + "/collect")
    let fileSystem = PosixFileSystem()
    var all = Set<BlobDigest>()
    for seed in 0..<UInt64(collected) {
        let bytes = photo(seed, size: 64)
        let digest = BlobDigest.of(bytes)
        all.insert(digest)
        let path = many.path(of: digest)
        try fileSystem.createDirectory(Path.directory(of: path))
        let file = try fileSystem.openFile(path, .createOrTruncate)
        try file.write(bytes, at: 0)
        try file.close()
    }
    start = ContinuousClock.now
    let kept = try many.collect(roots: [AllRoots(all: all)], grace: .zero)
    let scan = seconds(start)
    start = ContinuousClock.now
    let report = try many.collect(roots: [NoRoots()], grace: .zero)
    let collect = seconds(start)
    precondition(kept.collected.isEmpty && report.collected.count == collected)
    print("scan \(collected) blobs, all in use:    \(String(format: "%.3f", scan)) s")
    print("collect \(collected) unused blobs:      \(String(format: "%.3f", collect)) s (target: under 1 s for 100,000)")
} catch {
    FileHandle.standardError.write("blob-bench: \(error)\n".data(using: .utf8)!)
    exit(1)
}
