@testable import BlobStore
import FileIO
import Foundation
import SeededRandom
import StorageTestSupport
import Synchronization
import Testing

final class Folder {
    let path = TemporaryFolder.uniquePath("blobs")
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func jpeg(_ seed: UInt64, size: Int = 64) -> [UInt8] {
    var random = SplitMix(seed: seed)
    return [0xFF, 0xD8, 0xFF, 0xE0] + (0..<max(0, size - 4)).map { _ in UInt8.random(in: 0...255, using: &random) }
}

/// Roots given as a set that the test can change while a collection runs.
final class SetRoots: BlobRoots, @unchecked Sendable {
    let digests = Mutex<Set<BlobDigest>>([])
    var failing = false
    func referencedDigests() throws -> Set<BlobDigest> {
        if failing { throw CocoaError(.featureUnsupported) }
        return digests.withLock { $0 }
    }
    func isReferenced(_ digest: BlobDigest) -> Bool { digests.withLock { $0.contains(digest) } }
}

func files(_ path: String) -> [String] {
    (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter {
        var directory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path + "/" + $0, isDirectory: &directory)
        return !directory.boolValue
    }.sorted()
}

/// Roots that know nothing when asked for a list, but answer yes for one digest when asked
/// about it: a blob that became referenced after the collection read its roots.
final class LateRoots: BlobRoots, @unchecked Sendable {
    let late: BlobDigest
    init(_ late: BlobDigest) { self.late = late }
    func referencedDigests() throws -> Set<BlobDigest> { [] }
    func isReferenced(_ digest: BlobDigest) -> Bool { digest == late }
}

/// What the stress test's writers reference, shared with its collector.
final class SharedReferences: Sendable {
    let counts = Mutex<[BlobDigest: Int]>([:])
    let stop = Mutex(false)
}

func modificationTime(_ path: String) throws -> Duration {
    try PosixFileSystem().status(path)!.modificationTime
}

@Suite(.heavy) struct BlobStoreTests {
    @Test func bytesAreStoredUnderTheirDigestFannedOutByTheFirstByte() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        let bytes = jpeg(1, size: 5_000)
        let lease = try store.put(bytes)
        let hex = BlobDigest.of(bytes).description
        #expect(lease.digest.description == hex)
        #expect(lease.mediaType == .jpeg)
        #expect(!lease.wasAlreadyStored)
        #expect(files(folder.path) == ["sha256/\(hex.prefix(2))/\(hex.dropFirst(2))"], "no temporary file is left")
        #expect(try store.get(lease.digest) == bytes)
        #expect(try store.contains(lease.digest))
        #expect(try store.get(BlobDigest.of([1, 2, 3])) == nil)
    }

    @Test func theSameBytesTwiceTakeOneFileAndRefreshItsTime() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        let bytes = jpeg(2)
        let first = try store.put(bytes)
        let path = store.path(of: first.digest)
        try PosixFileSystem().setModificationTime(path, to: .seconds(1_000_000_000))
        let second = try store.put(bytes)
        #expect(second.wasAlreadyStored)
        #expect(files(folder.path).count == 1)
        #expect(try modificationTime(path) > .seconds(1_700_000_000), "storing existing bytes refreshes the time")
        // A damaged copy is replaced by the bytes being stored.
        try Data([0xFF, 0xD8, 0xFF, 0x00]).write(to: URL(fileURLWithPath: path))
        let third = try store.put(bytes)
        #expect(!third.wasAlreadyStored)
        #expect(try store.get(third.digest) == bytes)
    }

    @Test func badInputIsRefusedAndNothingIsWritten() throws {
        let folder = Folder()
        var options = BlobStoreOptions()
        options.maxBlobSize = 1_000
        let store = try BlobStore(directory: folder.path, options: options)
        let cases: [([UInt8], BlobError.Code, String)] = [
            (jpeg(3, size: 1_001), .tooLarge, "1001 bytes is over the 1000-byte limit"),
            (Array("<!DOCTYPE html><html><body>Service unavailable</body></html>".utf8), .unacceptableType, "text (an HTML or XML page?)"),
            (Array("{\"stat\":\"fail\"}".utf8), .unacceptableType, "an unknown format"),
            ([], .unacceptableType, "not one of image/gif, image/jpeg, image/png, image/webp"),
        ]
        for (bytes, code, message) in cases {
            do {
                _ = try store.put(bytes)
                Issue.record("stored \(bytes.count) bytes")
            } catch let error as BlobError {
                #expect(error.code == code)
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        #expect(files(folder.path).isEmpty)
        for text in ["", "abc", String(repeating: "z", count: 64), "../" + String(repeating: "a", count: 61), String(repeating: "a", count: 65)] {
            #expect(throws: BlobError.self) { try BlobStore.digest(parsing: text) }
        }
        #expect(try BlobStore.digest(parsing: String(repeating: "ab", count: 32)).description == String(repeating: "ab", count: 32))
    }

    @Test(arguments: [
        ([0xFF, 0xD8, 0xFF, 0xDB], MediaType.jpeg), ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], .png),
        (Array("GIF89a..".utf8), .gif), (Array("GIF87a".utf8), .gif), (Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), .webp),
    ] as [([UInt8], MediaType)])
    func mediaTypesAreSniffedFromTheBytes(_ bytes: [UInt8], _ type: MediaType) {
        #expect(MediaType.sniff(bytes) == type)
        #expect(MediaType.sniff(bytes.dropLast(bytes.count - 2)) == nil, "a signature cut short is nothing")
    }

    @Test func verificationFindsBytesThatNoLongerMatchTheirName() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        let leases = try (0..<20).map { try store.put(jpeg($0)) }
        #expect(try store.verify().isClean)
        let damaged = store.path(of: leases[7].digest)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: damaged)))
        bytes[10] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let report = try store.verify()
        #expect(report.checked == 20)
        #expect(report.mismatches.map(\.expected) == [leases[7].digest])
        #expect(report.mismatches.first?.path == damaged)
    }

    @Test func collectionRespectsRootsLeasesAndTheGracePeriod() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        let roots = SetRoots()
        let kept = try store.put(jpeg(1))
        let old = try store.put(jpeg(2))
        let fresh = try store.put(jpeg(3))
        let held = try store.put(jpeg(4))
        roots.digests.withLock { $0 = [kept.digest] }
        for lease in [kept, old, fresh] { lease.release() }
        let now = BlobStore.wallClock()
        try PosixFileSystem().setModificationTime(store.path(of: old.digest), to: now - .seconds(3_600))
        try PosixFileSystem().setModificationTime(store.path(of: held.digest), to: now - .seconds(3_600))

        let dry = try store.collect(roots: [roots], grace: .seconds(600), dryRun: true)
        #expect(dry.collected == [old.digest])
        #expect(files(folder.path).count == 4, "a dry run deletes nothing")

        let report = try store.collect(roots: [roots], grace: .seconds(600))
        #expect(report.collected == [old.digest])
        #expect(report.reclaimedBytes == 64)
        #expect(report.keptReferenced == 1 && report.keptInGrace == 1 && report.keptLeased == 1)
        #expect(try !store.contains(old.digest) && store.contains(fresh.digest) && store.contains(held.digest))

        // Zero grace, asked for explicitly, takes the fresh one too; the leased one stays
        // until its lease is released.
        #expect(try store.collect(roots: [roots], grace: .zero).collected == [fresh.digest])
        #expect(try store.contains(held.digest))
        held.release()
        #expect(try store.collect(roots: [roots], grace: .zero).collected == [held.digest])
        #expect(try store.contains(kept.digest))
    }

    @Test func collectionRefusesWhenAProjectionCannotSayWhatItUses() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        try store.put(jpeg(1)).release()
        let roots = SetRoots()
        roots.failing = true
        #expect { try store.collect(roots: [SetRoots(), roots], grace: .zero) } throws: {
            ($0 as? BlobError)?.code == .rootsUnavailable
        }
        #expect(files(folder.path).count == 1)
    }

    /// A blob that becomes referenced after the roots were read is checked again just before
    /// its delete, and kept.
    @Test func rootsAreCheckedAgainRightBeforeEachDelete() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        let a = try store.put(jpeg(1)).digest
        let b = try store.put(jpeg(2)).digest
        let report = try store.collect(roots: [LateRoots(a)], grace: .zero)
        #expect(report.collected == [b])
        #expect(report.keptReferenced == 1)
        #expect(try store.contains(a))
    }

    @Test func staleTemporaryFilesGoAndWritesInProgressStay() throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        try store.put(jpeg(1)).release()
        let fanOut = folder.path + "/sha256/ab"
        try FileManager.default.createDirectory(atPath: fanOut, withIntermediateDirectories: true)
        let stale = fanOut + "/.cdef-1.tmp", recent = fanOut + "/.cdef-2.tmp", busy = fanOut + "/.cdef-3.tmp"
        for path in [stale, recent, busy] { try Data([1]).write(to: URL(fileURLWithPath: path)) }
        let now = BlobStore.wallClock()
        try PosixFileSystem().setModificationTime(stale, to: now - .seconds(3_600))
        try PosixFileSystem().setModificationTime(busy, to: now - .seconds(3_600))
        store.stripes[0xab].guarded.withLock { _ = $0.writing.insert(busy) }
        let stray = fanOut + "/not-a-blob"
        try Data([2]).write(to: URL(fileURLWithPath: stray))

        let report = try store.collect(roots: [SetRoots()], grace: .seconds(600))
        #expect(report.removedTemporaryFiles == [stale])
        #expect(report.strayFiles == [stray])
        #expect(FileManager.default.fileExists(atPath: recent))
        #expect(FileManager.default.fileExists(atPath: busy), "a write in progress is never taken")
        #expect(FileManager.default.fileExists(atPath: stray), "files that are not blobs are never touched")
    }

    /// Writers store and reference blobs (some the same bytes) and drop references, while a
    /// collector with zero grace runs beside them. A referenced or leased blob is never
    /// missing, at any moment.
    @Test(.serialized, arguments: [1, 2, 3] as [UInt64])
    func concurrentWritersAndCollectionNeverLoseAReferencedBlob(_ seed: UInt64) async throws {
        let folder = Folder()
        let store = try BlobStore(directory: folder.path)
        let roots = SetRoots()
        let shared = SharedReferences()
        let referenceCounts = shared
        // The collector loops without pause, so it gets a thread of its own, not one of the
        // cooperative pool's (which the writers need).
        let rounds = Mutex(0)
        let collectorDone = DispatchSemaphore(value: 0)
        Thread {
            while !shared.stop.withLock({ $0 }) {
                do { _ = try store.collect(roots: [roots], grace: .zero) } catch { Issue.record("\(error)") }
                rounds.withLock { $0 += 1 }
            }
            collectorDone.signal()
        }.start()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    var random = SplitMix(seed: seed * 100 + UInt64(writer))
                    var mine: [BlobDigest] = []
                    for _ in 0..<300 {
                        if !mine.isEmpty, Int.random(in: 0..<3, using: &random) == 0 {
                            let digest = mine.removeFirst()
                            referenceCounts.counts.withLock { counts in
                                counts[digest, default: 1] -= 1
                                if counts[digest] == 0 { counts[digest] = nil }
                                let live = Set(counts.keys)
                                roots.digests.withLock { $0 = live }
                            }
                            continue
                        }
                        // Few distinct contents, so writers store the same bytes at once.
                        let lease = try store.put(jpeg(UInt64.random(in: 0..<24, using: &random)))
                        #expect(try store.get(lease.digest) != nil, "a leased blob is there")
                        referenceCounts.counts.withLock { counts in
                            counts[lease.digest, default: 0] += 1
                            let live = Set(counts.keys)
                            roots.digests.withLock { $0 = live }
                        }
                        lease.release()
                        mine.append(lease.digest)
                        for digest in referenceCounts.counts.withLock({ Array($0.keys) }) where referenceCounts.counts.withLock({ $0[digest] != nil }) {
                            if try !store.contains(digest), referenceCounts.counts.withLock({ $0[digest] != nil }) {
                                Issue.record("referenced blob \(digest) is missing")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        shared.stop.withLock { $0 = true }
        collectorDone.wait()
        #expect(rounds.withLock { $0 } > 5, "the collector ran \(rounds.withLock { $0 }) times alongside the writers")
        for digest in referenceCounts.counts.withLock({ Array($0.keys) }) { #expect(try store.contains(digest)) }
        // Once nothing is referenced, everything goes.
        roots.digests.withLock { $0 = [] }
        _ = try store.collect(roots: [roots], grace: .zero)
        #expect(files(folder.path).isEmpty)
    }

    /// A file that disappears between the listing and its delete (a `put` renamed its temporary
    /// file into place, or another collection took the blob) is not an error and not counted.
    @Test func filesGoneBeforeTheirDeleteAreNotFailures() throws {
        let folder = Folder()
        let fileSystem = InstrumentedFileSystem()
        let store = try BlobStore(directory: folder.path, fileSystem: fileSystem)
        let unused = try store.put(jpeg(4))
        unused.release()
        let fanOut = Path.directory(of: store.path(of: unused.digest))
        let temporary = fanOut + "/.feed-1.tmp"
        try Data([1]).write(to: URL(fileURLWithPath: temporary))
        // Whoever gets there first removes each file just before the collector's own unlink.
        fileSystem.failure = { operation, path, _ in
            if operation == "unlink" { try? FileManager.default.removeItem(atPath: path) }
            return nil
        }
        let report = try store.collect(roots: [SetRoots()], grace: .zero)
        #expect(report.collected.isEmpty && report.removedTemporaryFiles.isEmpty)
        #expect(files(folder.path).isEmpty)
        // A real failure is still one.
        fileSystem.failure = nil
        try Data([1]).write(to: URL(fileURLWithPath: temporary))
        fileSystem.failure = { operation, _, _ in operation == "unlink" ? EACCES : nil }
        #expect(throws: BlobError.self) { try store.collect(roots: [SetRoots()], grace: .zero) }
    }

    @Test func injectedFailuresLeaveNoBlobAndNoTemporaryFile() throws {
        // "syncdir /sha256": the fan-out folder's name cannot be made durable, so nothing is
        // written; "syncdir": the blob's own folder cannot be synced after the rename.
        for operation in ["open", "write", "sync", "rename", "syncdir /sha256", "syncdir"] {
            let folder = Folder()
            let fileSystem = InstrumentedFileSystem()
            let store = try BlobStore(directory: folder.path, fileSystem: fileSystem)
            fileSystem.failure = { op, path, _ in
                if operation == "syncdir" { return op == "syncdir" && !path.hasSuffix("/sha256") ? EIO : nil }
                return "\(op) /\(Path.name(of: path))" == operation || op == operation ? EIO : nil
            }
            #expect(throws: BlobError.self, "\(operation)") { try store.put(jpeg(9)) }
            fileSystem.failure = nil
            let leftovers = files(folder.path)
            if operation == "syncdir" {
                // Renamed but not known durable: the blob is there, unreferenced, and goes.
                #expect(leftovers.count == 1)
            } else {
                #expect(leftovers.isEmpty, "\(operation): \(leftovers)")
            }
        }
    }
}
