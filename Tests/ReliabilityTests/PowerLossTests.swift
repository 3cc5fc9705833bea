import FileIO
import Foundation
import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

#if canImport(Glibc)
import Glibc
#endif

/// The power goes at every I/O operation of a mixed workload in turn, and each way a disk can
/// keep what was not synced is tried; separately, each write, sync, rename, creation,
/// removal and directory sync fails in turn with EIO or ENOSPC. After each, the store
/// keeps every guarantee (``violations(ofStoreAt:fileSystem:acknowledged:written:)``), and a
/// failure reaches the caller.
@Suite(.heavy) struct PowerLossTests {
    static let folder = "/disk/store"
    /// Steps of the mixed workload per run: enough for segment rolls, snapshots, collections.
    static let steps = Int(ProcessInfo.processInfo.environment["VT_POWER_STEPS"] ?? "") ?? 60

    /// What a run of the workload saw.
    struct Run {
        var acknowledged: [UInt64: String] = [:]
        var errors: [any Error] = []
        var snapshotFailure: (any Error)?
    }

    /// Runs the workload on `disk`; after a failure it carries on (the store decides what it
    /// still accepts) unless the power is gone.
    static func run(on disk: SimulatedDisk, seed: UInt64 = 8) async -> Run {
        var run = Run()
        let store: TouristStore
        do {
            store = try await TouristStore.open(at: folder, options: crashTestOptions(), fileSystem: disk)
        } catch {
            run.errors.append(error)
            return run
        }
        var workload = MixedWorkload(seed: seed)
        for _ in 0..<steps where !disk.isDead {
            do { _ = try await workload.step(store) } catch { run.errors.append(error) }
        }
        for event in workload.acknowledged { run.acknowledged[event.sequence] = fingerprint(event) }
        do { try await store.close() } catch { run.errors.append(error) }
        run.snapshotFailure = store.snapshotFailure
        return run
    }

    static func newDisk() -> SimulatedDisk { SimulatedDisk(root: "/disk") }

    @Test(arguments: SimulatedDisk.PowerLoss.allCases)
    func aPowerCutAtEveryOperationKeepsEveryGuarantee(_ loss: SimulatedDisk.PowerLoss) async throws {
        let whole = Self.newDisk()
        let complete = await Self.run(on: whole)
        #expect(complete.errors.isEmpty, "the workload runs cleanly: \(complete.errors)")
        let total = whole.operationCount
        #expect(total > 300, "the workload does enough I/O to be worth cutting (\(total))")
        let files = whole.files(under: Self.folder).keys
        #expect(files.contains { $0.hasSuffix(".seg") } && files.contains { $0.hasSuffix(".blk") }, "the hot tail was compacted into blocks")
        #expect(whole.count(of: .rename) > 10, "segments, blocks and snapshots were renamed into place")
        #expect(files.contains { $0.hasSuffix(".snap") })
        #expect(whole.count(of: .remove) > 5, "collections and pruning removed files")
        let history = try #require(writtenEvents(inStoreAt: Self.folder, fileSystem: whole))
        let downloads = history.filter { if case .photoDownloaded = $0.event { true } else { false } }
        #expect(downloads.count >= 10, "photos were stored and recorded")
        var cuts = 0
        for cut in 1...total + 1 {
            let disk = Self.newDisk()
            disk.cutPower(atOperation: cut)
            let run = await Self.run(on: disk)
            let written = writtenEvents(inStoreAt: Self.folder, fileSystem: disk.afterPowerLoss(.keepEverything))
            let found = await violations(
                ofStoreAt: Self.folder, fileSystem: disk.afterPowerLoss(loss, seed: UInt64(cut)),
                acknowledged: run.acknowledged, written: written)
            #expect(found.isEmpty, "power cut at I/O \(cut) of \(total), \(loss): \(found)")
            cuts += 1
        }
        print("power loss \(loss): \(cuts) cut points over \(total) I/O operations, \(Self.steps) steps")
    }

    static let faults: [(SimulatedDisk.Operation.Kind, Int32)] = [
        (.write, EIO), (.write, ENOSPC), (.sync, EIO), (.sync, ENOSPC), (.rename, EIO), (.rename, ENOSPC),
        (.create, ENOSPC), (.syncDirectory, EIO), (.remove, EIO), (.truncate, ENOSPC), (.makeDirectory, ENOSPC),
    ]

    @Test(arguments: faults)
    func everyFailedOperationReachesTheCallerAndBreaksNothing(_ kind: SimulatedDisk.Operation.Kind, _ code: Int32) async throws {
        let whole = Self.newDisk()
        _ = await Self.run(on: whole)
        let count = whole.count(of: kind)
        #expect(count > 0)
        var tried = 0
        for k in 1...count {
            let disk = Self.newDisk()
            disk.fail { $0.kind == kind && $0.numberOfKind == k ? code : nil }
            let run = await Self.run(on: disk)
            guard let failed = disk.failedOperations.first else { continue }  // this run did less I/O
            tried += 1
            // Tolerated by design, and never wrong: an index is a cache rebuilt from its segment,
            // a key summary or a tail checkpoint costs only time when missing, and pruning a
            // superseded snapshot is tried again after the next one.
            let tolerated = failed.path.hasSuffix(".idx") || failed.isDerivedFileWrite
                || (failed.kind == .remove && failed.path.hasSuffix(".snap"))
            #expect(
                !run.errors.isEmpty || run.snapshotFailure != nil || tolerated,
                "\(IOError.name(for: code)) on \(failed) was swallowed")
            for loss in [SimulatedDisk.PowerLoss.keepEverything, .loseUnsynced] {
                let found = await violations(
                    ofStoreAt: Self.folder, fileSystem: disk.afterPowerLoss(loss), acknowledged: run.acknowledged,
                    written: writtenEvents(inStoreAt: Self.folder, fileSystem: disk.afterPowerLoss(.keepEverything)))
                #expect(found.isEmpty, "\(IOError.name(for: code)) on \(failed), then \(loss): \(found)")
            }
        }
        print("fault \(kind) \(IOError.name(for: code)): \(tried) of \(count) operations failed in turn")
    }
}
