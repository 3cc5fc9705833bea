@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// One byte at a time of a small store's segments, indexes and snapshots is damaged. Every
/// flip in the log is detected (by verification, and by reading: an error, or a cut torn
/// tail, never a different event); a damaged index or snapshot is ignored or skipped; and the
/// store never presents a wrong state as right.
///
/// By default a seeded sample of positions per file (`VT_FLIPS`, 600); `VT_FLIPS=all` flips
/// every byte (RELIABILITY.md).
@Suite(.heavy) struct StoreCorruptionTests {
    static let folder = "/disk/store"

    /// A closed store with a few segments, their indexes and snapshots, and the events it holds.
    static func makeStore(format: LogFormatVersion = .v2) async throws -> (SimulatedDisk, [RecordedEvent]) {
        let disk = SimulatedDisk(root: "/disk")
        var options = crashTestOptions()
        options.log.writesFormatOne = format == .v1
        let store = try await TouristStore.open(at: folder, options: options, fileSystem: disk)
        var workload = MixedWorkload(seed: 31)
        for _ in 0..<160 { _ = try await workload.step(store) }
        let events = try store.events()
        try await store.close()
        return (disk, events)
    }

    /// Positions to flip in a file of `count` bytes: all, or a seeded sample.
    static func positions(_ count: Int, seed: UInt64) -> [Int] {
        let setting = ProcessInfo.processInfo.environment["VT_FLIPS"] ?? "600"
        let wanted = setting == "all" ? count : min(count, Int(setting) ?? 600)
        if wanted == count { return Array(0..<count) }
        var random = seed | 1
        var chosen = Set<Int>()
        while chosen.count < wanted {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            chosen.insert(Int((random >> 33) % UInt64(count)))
        }
        return chosen.sorted()
    }

    /// A copy of `disk` with one bit of one byte of `path` flipped.
    static func damaged(_ disk: SimulatedDisk, _ path: String, at position: Int, original: [UInt8]) -> SimulatedDisk {
        let copy = disk.afterPowerLoss(.keepEverything)
        var bytes = original
        bytes[position] ^= 0x10
        copy.overwrite(path, with: bytes)
        return copy
    }

    @Test func everyFlipInTheLogIsDetectedAndNeverMisread() async throws {
        let (disk, written) = try await Self.makeStore()
        // Format 2: block files and the hot tail's segments.
        let segments = disk.files(under: Self.folder).filter { $0.key.hasSuffix(".seg") || $0.key.hasSuffix(".blk") }
            .sorted { $0.key < $1.key }
        #expect(segments.contains { $0.key.hasSuffix(".blk") } && segments.contains { $0.key.hasSuffix(".seg") })
        var flipped = 0
        var detected = 0
        var cutAsTornTail = 0
        for (index, (name, original)) in segments.enumerated() {
            let path = Self.folder + "/" + name
            for position in Self.positions(original.count, seed: UInt64(index + 1)) {
                let copy = Self.damaged(disk, path, at: position, original: original)
                flipped += 1
                // Verification finds it: a problem reported, or the log refused as damaged.
                var noticed = false
                do {
                    let report = try LogVerifier.verify(directory: Self.folder + "/log", fileSystem: copy, payloadCodec: EventCodec.blockCodec)
                    noticed = !report.isClean
                    if report.problems.allSatisfy({ $0.kind == .tornTail }) && noticed { cutAsTornTail += 1 }
                } catch let error as LogError {
                    noticed = error.code == .corrupt || error.code == .notALog
                }
                if noticed { detected += 1 }
                #expect(noticed, "a flip at \(name):\(position) went unnoticed by verification")
                // Reading never yields a changed event: an error, or a prefix of the events.
                if let read = writtenEvents(inStoreAt: Self.folder, fileSystem: copy) {
                    #expect(read == Array(written.prefix(read.count)), "a flip at \(name):\(position) changed what is read")
                }
                // Opening: refused with the damage named, or a state that is the fold of a prefix.
                do {
                    let store = try await TouristStore.open(at: Self.folder, options: crashTestOptions(), fileSystem: copy)
                    let state = store.state
                    #expect(
                        state == fold(Array(written.prefix(Int(state.sequence)))),
                        "a flip at \(name):\(position) opened to a wrong state")
                    try await store.close()
                } catch let error as DomainError {
                    #expect(error.code == .storage || error.code == .undecodableEvent, "\(error)")
                    #expect(
                        "\(error)".contains(name) || "\(error)".contains("log"),
                        "the error names the damaged file: \(error)")
                }
            }
        }
        #expect(detected == flipped)
        print("corruption, log: \(flipped) bytes flipped in \(segments.count) block files and segments, \(detected) detected (\(cutAsTornTail) as a torn last batch)")
    }

    /// Format 1's sparse indexes (format 2's hot tail is small enough to scan).
    @Test func aDamagedIndexIsIgnoredAndTheStateStaysRight() async throws {
        let (disk, written) = try await Self.makeStore(format: .v1)
        let indexes = disk.files(under: Self.folder).filter { $0.key.hasSuffix(".idx") }.sorted { $0.key < $1.key }
        #expect(indexes.count >= 2)
        let probes = [1, written.count / 3, written.count / 2, written.count - 1].map(UInt64.init)
        var flipped = 0
        for (index, (name, original)) in indexes.enumerated() {
            for position in Self.positions(original.count, seed: UInt64(index + 100)) {
                let copy = Self.damaged(disk, Self.folder + "/" + name, at: position, original: original)
                flipped += 1
                let reader = try StoreReader.open(at: Self.folder, fileSystem: copy)
                for sequence in probes {
                    #expect(
                        try reader.state(at: sequence) == fold(Array(written.prefix(Int(sequence)))),
                        "a flip at \(name):\(position) changed the state at \(sequence)")
                }
                // Opened to write as the version of its day did (an app upgrades a format-1 store first).
                var options = crashTestOptions()
                options.log.writesFormatOne = true
                let store = try await TouristStore.open(at: Self.folder, options: options, fileSystem: copy)
                #expect(store.state == fold(written))
                #expect(try store.events() == written)
                try await store.close()
            }
        }
        print("corruption, indexes: \(flipped) bytes flipped in \(indexes.count) indexes, every state right")
    }

    @Test func aDamagedSnapshotIsSkippedAndTheStateStaysRight() async throws {
        let (disk, written) = try await Self.makeStore()
        let snapshots = disk.files(under: Self.folder).filter { $0.key.hasSuffix(".snap") }.sorted { $0.key < $1.key }
        let (newestName, original) = try #require(snapshots.last)
        var flipped = 0
        var skipped = 0
        for position in Self.positions(original.count, seed: 7) {
            let copy = Self.damaged(disk, Self.folder + "/" + newestName, at: position, original: original)
            flipped += 1
            let store = try await TouristStore.open(at: Self.folder, options: crashTestOptions(), fileSystem: copy)
            #expect(store.state == fold(written), "a flip at \(newestName):\(position) opened to a wrong state")
            if store.report.skippedSnapshots.contains(where: { $0.file.hasSuffix(newestName) }) { skipped += 1 }
            #expect(
                store.report.skippedSnapshots.contains { $0.file.hasSuffix(newestName) },
                "a flip at \(newestName):\(position) was not noticed")
            try await store.close()
        }
        #expect(skipped == flipped)
        print("corruption, snapshots: \(flipped) bytes flipped in \(newestName), \(skipped) skipped, every state right")
    }
}
