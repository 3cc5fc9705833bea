import EventLog
import FileIO
import Foundation
import ReliabilitySupport
import StorageTestSupport
import Testing
@testable import VirtualTourist

#if canImport(Glibc)
import Glibc
#endif

/// A full disk and a read-only store: every change is refused with an error that says so,
/// nothing is damaged, reading goes on, and the store works again once space (or write
/// access) is back. On a real small file system (tmpfs, when this machine lets the tests
/// mount one) and through the file-system interface.
@Suite(.serialized, .waitsForProcesses) struct FullDiskTests {
    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root with CAP_SYS_ADMIN"))
    func aRealFullDiskRefusesClearlyAndTheStoreCarriesOnWhenSpaceIsBack() async throws {
        let disk = try #require(SmallDisk(megabytes: 4))
        try await fillAndFree(folder: disk.path + "/store", fileSystem: PosixFileSystem(), fill: {
            // Take every free byte, as another program would.
            let filler = try PosixFileSystem().openFile(disk.path + "/filler", .createNew)
            let chunk = [UInt8](repeating: 7, count: 4096)
            var offset: Int64 = 0
            while (try? filler.write(chunk, at: offset)) != nil { offset += 4096 }
            try filler.close()
        }, free: { try PosixFileSystem().removeFile(disk.path + "/filler") })
    }

    @Test func aFullDiskThroughTheInterfaceRefusesClearlyAndTheStoreCarriesOn() async throws {
        let folder = TemporaryFolder("full")
        let fileSystem = InstrumentedFileSystem()
        try await fillAndFree(folder: folder.path + "/store", fileSystem: fileSystem, fill: {
            // Writes and new folders need space; cutting a file back never does.
            fileSystem.failure = { operation, _, _ in ["write", "mkdir"].contains(operation) ? ENOSPC : nil }
        }, free: { fileSystem.failure = nil })
    }

    /// Runs the workload, fills the disk, checks that changes are refused with "the disk is
    /// full" and nothing is damaged, frees the disk, and checks that the store goes on.
    func fillAndFree(
        folder: String, fileSystem: any FileSystem, fill: () throws -> Void, free: () throws -> Void
    ) async throws {
        var store = try await TouristStore.open(at: folder, options: crashTestOptions(), fileSystem: fileSystem)
        var workload = MixedWorkload(seed: 12)
        for _ in 0..<40 { _ = try await workload.step(store) }
        try fill()
        var refusals = 0
        var saidFull = 0
        for _ in 0..<30 {
            do { _ = try await workload.step(store) } catch let error as DomainError {
                refusals += 1
                #expect(error.code == .storage, "\(error)")
                // The first refusal says why; after a failed sync the log asks to be reopened.
                if error.description.contains("the disk is full") { saidFull += 1 } else {
                    #expect(error.description.contains("reopen"), "\(error)")
                }
            }
        }
        #expect(refusals > 0 && saidFull > 0)
        let report = try LogVerifier.verify(directory: folder + "/log", fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
        #expect(report.eventsAreIntact, "\(report.problems)")

        try free()
        do {
            _ = try await store.dropPin(at: Coordinate(latitude: 3, longitude: 4))
        } catch let error as DomainError {
            // Only a failed sync leaves the log's state unknown; then the store must be reopened.
            #expect(error.description.contains("reopen"), "\(error)")
            try? await store.close()
            store = try await TouristStore.open(at: folder, options: crashTestOptions(), fileSystem: fileSystem)
        }
        for _ in 0..<10 { _ = try await workload.step(store) }
        try await store.close()
        var acknowledged: [UInt64: String] = [:]
        for event in workload.acknowledged { acknowledged[event.sequence] = fingerprint(event) }
        let found = await violations(ofStoreAt: folder, fileSystem: fileSystem, acknowledged: acknowledged, written: nil)
        #expect(found.isEmpty, "\(found)")
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root with CAP_SYS_ADMIN"))
    func aReadOnlyStoreCanBeReadButNotChangedAndWorksOnceWritable() async throws {
        let disk = try #require(SmallDisk(megabytes: 4))
        let folder = disk.path + "/store"
        let store = try await TouristStore.open(at: folder, options: crashTestOptions())
        var workload = MixedWorkload(seed: 4)
        for _ in 0..<40 { _ = try await workload.step(store) }
        let events = try store.events()
        try await store.close()
        let before = try snapshotFiles(folder)

        try disk.remount(readOnly: true)
        do {
            _ = try await TouristStore.open(at: folder, options: crashTestOptions())
            Issue.record("a read-only store was opened for writing")
        } catch let error as DomainError {
            #expect(error.code == .storage)
            #expect(error.description.contains("read-only"), "\(error)")
        }
        let reader = try StoreReader.open(at: folder)
        #expect(try reader.currentState() == fold(events))
        let middle = UInt64(events.count / 2)
        #expect(try reader.state(at: middle) == fold(Array(events.prefix(Int(middle)))))
        let blobs = try reader.blobStore()
        for digest in fold(events).referencedDigests { #expect(try blobs.get(digest) != nil) }
        #expect(try snapshotFiles(folder) == before, "nothing changed on a read-only store")

        try disk.remount(readOnly: false)
        let writable = try await TouristStore.open(at: folder, options: crashTestOptions())
        #expect(writable.state == fold(events))
        _ = try await writable.dropPin(at: Coordinate(latitude: 5, longitude: 6))
        try await writable.close()
    }
}

/// A tmpfs of a few megabytes mounted in a temporary folder for one test, unmounted after.
final class SmallDisk {
    let path: String

    init?(megabytes: Int) {
        path = TemporaryFolder.uniquePath("small-disk")
        guard mkdir(path, 0o755) == 0 else { return nil }
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) else {
            rmdir(path)
            return nil
        }
    }

    deinit {
        _ = Self.run("/bin/umount", ["-l", path])
        rmdir(path)
    }

    func remount(readOnly: Bool) throws {
        guard Self.run("/bin/mount", ["-o", readOnly ? "remount,ro" : "remount,rw", path]) else {
            throw IOError(operation: "mount", path: path, code: EPERM)
        }
    }

    static let canMount: Bool = SmallDisk(megabytes: 1) != nil

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
