@testable import EventLog
import FileIO
import Foundation
import LegacyLogWriter
import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

#if canImport(Glibc)
import Glibc
#endif

/// `vt upgrade` under the simulated disk: the power goes at every I/O operation of an upgrade
/// (with each way a disk keeps what was not synced), and separately each operation fails with
/// EIO or ENOSPC. Every time, the store opens with every event of the format-1 store, in
/// whichever format survived, and running the upgrade again finishes it.
@Suite(.heavy) struct UpgradeReliabilityTests {
    static let folder = "/disk/store"
    static var logPath: String { Path.join(folder, "log") }

    /// A format-1 store written by the mixed workload, on a disk that each case copies, and
    /// its events.
    static func format1Store() async throws -> (SimulatedDisk, [RecordedEvent]) {
        let disk = SimulatedDisk(root: "/disk")
        var options = crashTestOptions()
        options.log.writesFormatOne = true
        let store = try await TouristStore.open(at: folder, options: options, fileSystem: disk)
        var workload = MixedWorkload(seed: 21)
        // Format 1 refuses the workload's compaction steps; every other step lands.
        for _ in 0..<80 { _ = try? await workload.step(store) }
        try await store.close()
        let events = try #require(writtenEvents(inStoreAt: folder, fileSystem: disk))
        return (disk, events)
    }

    /// Small blocks, so that the upgrade writes several block files and a cut can land in each.
    static func upgradeOptions() -> StoreOptions {
        var options = crashTestOptions()
        options.log.blockSize = 512
        return options
    }

    /// A copy of `disk` as it is now, with no lock held.
    static func copy(_ disk: SimulatedDisk) -> SimulatedDisk { disk.afterPowerLoss(.keepEverything) }

    /// Runs the upgrade on what a failure left, to its end, and checks the result.
    static func finishUpgrade(on disk: SimulatedDisk, events: [RecordedEvent], _ what: String) async {
        do {
            _ = try await TouristStore.upgrade(at: folder, options: upgradeOptions(), fileSystem: disk)
        } catch let error as DomainError where error.code == .invalidArgument {
            // Already done: the log is format 2 and log.format1/ is there.
        } catch {
            Issue.record("\(what): the upgrade does not run to its end afterwards: \(error)")
            return
        }
        #expect((try? LogReader(directory: logPath, fileSystem: disk, payloadCodec: EventCodec.blockCodec).format) == .v2, "\(what): format 2 at the end")
        #expect(writtenEvents(inStoreAt: folder, fileSystem: disk) == events, "\(what): every event after finishing")
    }

    @Test(arguments: SimulatedDisk.PowerLoss.allCases)
    func aPowerCutAtEveryOperationOfAnUpgradeLosesNothing(_ loss: SimulatedDisk.PowerLoss) async throws {
        let (base, events) = try await Self.format1Store()
        #expect(events.count > 60, "a store worth upgrading (\(events.count) events)")
        let acknowledged = Dictionary(uniqueKeysWithValues: events.map { ($0.sequence, fingerprint($0)) })
        let whole = Self.copy(base)
        let report = try await TouristStore.upgrade(at: Self.folder, options: Self.upgradeOptions(), fileSystem: whole)
        #expect(report.events == UInt64(events.count) && report.blockFiles > 1)
        let total = whole.operationCount
        #expect(whole.count(of: .rename) >= 4, "block files, the active segment, both folders and the snapshot")
        var formats: [LogFormatVersion: Int] = [:]
        for cut in 1...total + 1 {
            let disk = Self.copy(base)
            disk.cutPower(atOperation: cut)
            _ = try? await TouristStore.upgrade(at: Self.folder, options: Self.upgradeOptions(), fileSystem: disk)
            let survivor = disk.afterPowerLoss(loss, seed: UInt64(cut))
            if let format = try? LogReader(directory: Self.logPath, fileSystem: survivor, payloadCodec: EventCodec.blockCodec).format { formats[format, default: 0] += 1 }
            let found = await violations(
                ofStoreAt: Self.folder, fileSystem: survivor, acknowledged: acknowledged, written: events)
            #expect(found.isEmpty, "power cut at I/O \(cut) of \(total) of an upgrade, \(loss): \(found)")
            await Self.finishUpgrade(
                on: disk.afterPowerLoss(loss, seed: UInt64(cut)), events: events, "power cut at I/O \(cut), \(loss)")
        }
        if loss != .loseUnsynced { #expect(formats[.v2, default: 0] > 0 && formats[.v1, default: 0] > 0) }
        print("upgrade, power loss \(loss): \(total + 1) cut points, \(events.count) events; survivors by format: \(formats)")
    }

    @Test(arguments: [EIO, ENOSPC])
    func everyFailedOperationOfAnUpgradeReachesTheCallerAndLosesNothing(_ code: Int32) async throws {
        let (base, events) = try await Self.format1Store()
        let acknowledged = Dictionary(uniqueKeysWithValues: events.map { ($0.sequence, fingerprint($0)) })
        let whole = Self.copy(base)
        _ = try await TouristStore.upgrade(at: Self.folder, options: Self.upgradeOptions(), fileSystem: whole)
        let total = whole.operationCount
        var tried = 0
        for number in 1...total {
            let disk = Self.copy(base)
            disk.fail { $0.number == number ? code : nil }
            var thrown: (any Error)?
            do { _ = try await TouristStore.upgrade(at: Self.folder, options: Self.upgradeOptions(), fileSystem: disk) } catch { thrown = error }
            guard let failed = disk.failedOperations.first else { continue }
            tried += 1
            // Pruning a superseded snapshot is tried again after the next one, and a key summary or
            // tail checkpoint not written costs only time, by design.
            let tolerated = (failed.kind == .remove && failed.path.hasSuffix(".snap")) || failed.isDerivedFileWrite
            #expect(thrown != nil || tolerated, "\(IOError.name(for: code)) on \(failed) was swallowed")
            disk.fail(when: nil)
            for loss in [SimulatedDisk.PowerLoss.keepEverything, .loseUnsynced] {
                let found = await violations(
                    ofStoreAt: Self.folder, fileSystem: disk.afterPowerLoss(loss), acknowledged: acknowledged, written: events)
                #expect(found.isEmpty, "\(IOError.name(for: code)) on \(failed), then \(loss): \(found)")
            }
            await Self.finishUpgrade(on: Self.copy(disk), events: events, "\(IOError.name(for: code)) on \(failed)")
        }
        #expect(tried == total)
        print("upgrade, fault \(IOError.name(for: code)): \(tried) of \(total) operations failed in turn")
    }
}
