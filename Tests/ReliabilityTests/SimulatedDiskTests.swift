import FileIO
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The power-loss model itself: only what was synced is promised, and each loss keeps what it
/// says. If this model were lenient, the power-loss tests would prove nothing.
@Suite struct SimulatedDiskTests {
    func disk() throws -> (SimulatedDisk, any RandomAccessFile) {
        let disk = SimulatedDisk(root: "/d")
        let file = try disk.openFile("/d/a", .createNew)
        try file.write([1, 2, 3, 4], at: 0)
        try file.sync()
        try disk.syncDirectory("/d")
        try file.write([5, 6, 7, 8], at: 4)
        try file.write([9, 9], at: 0)
        return (disk, file)
    }

    func bytes(_ disk: SimulatedDisk, _ path: String) throws -> [UInt8]? {
        guard try disk.exists(path) else { return nil }
        return try disk.openFile(path, .readOnly).readAll()
    }

    @Test func syncedBytesSurviveAndUnsyncedOnesMayNot() throws {
        let (disk, _) = try disk()
        #expect(try bytes(disk, "/d/a") == [9, 9, 3, 4, 5, 6, 7, 8])
        #expect(try bytes(disk.afterPowerLoss(.keepEverything), "/d/a") == [9, 9, 3, 4, 5, 6, 7, 8])
        #expect(try bytes(disk.afterPowerLoss(.loseUnsynced), "/d/a") == [1, 2, 3, 4])
        // A torn last write keeps a prefix of it (here of [9, 9]) over what was there.
        let torn = try #require(try bytes(disk.afterPowerLoss(.tearLastWrite, seed: 3), "/d/a"))
        #expect(torn.count == 8 && Array(torn[2...]) == [3, 4, 5, 6, 7, 8] && [1, 9].contains(torn[0]) && torn[1] != 9)
        // Reordering: over seeds, the later write survives without the earlier one too.
        let outcomes = Set(try (1...40 as ClosedRange<UInt64>).map { try bytes(disk.afterPowerLoss(.reorderUnsynced, seed: $0), "/d/a")! })
        #expect(outcomes.contains([9, 9, 3, 4]), "the second write kept, the first lost")
        #expect(outcomes.contains([1, 2, 3, 4, 5, 6, 7, 8]))
    }

    @Test func aNameIsDurableOnlyOnceItsDirectoryIsSynced() throws {
        let (disk, file) = try disk()
        try file.sync()
        try disk.writeAtomically([7], to: "/d/b")  // syncs the directory
        let c = try disk.openFile("/d/c", .createNew)
        try c.write([1], at: 0)
        try c.sync()  // the bytes, not the name
        try disk.rename("/d/a", to: "/d/renamed")
        let lost = disk.afterPowerLoss(.loseUnsynced)
        #expect(try bytes(lost, "/d/a") == [9, 9, 3, 4, 5, 6, 7, 8], "the rename was not synced")
        #expect(try bytes(lost, "/d/renamed") == nil)
        #expect(try bytes(lost, "/d/b") == [7])
        #expect(try bytes(lost, "/d/c") == nil, "its name was never synced")
        let kept = disk.afterPowerLoss(.keepEverything)
        #expect(try bytes(kept, "/d/renamed") == [9, 9, 3, 4, 5, 6, 7, 8])
        #expect(try bytes(kept, "/d/a") == nil, "a rename is atomic")
    }

    @Test func aDirectoryThatWasNotSyncedIntoItsParentTakesItsFilesWithIt() throws {
        let disk = SimulatedDisk(root: "/d")
        try disk.createDirectory("/d/x/y")
        try disk.writeAtomically([1], to: "/d/x/y/f")  // syncs /d/x/y, not /d or /d/x
        #expect(try bytes(disk.afterPowerLoss(.loseUnsynced), "/d/x/y/f") == nil)
        try disk.syncDirectory("/d")
        try disk.syncDirectory("/d/x")
        #expect(try bytes(disk.afterPowerLoss(.loseUnsynced), "/d/x/y/f") == [1])
    }

    @Test func aRenamedDirectoryTakesEverythingUnderItAtomically() throws {
        let disk = SimulatedDisk(root: "/d")
        try disk.createDirectoryDurably("/d/old/sub")
        try disk.writeAtomically([1], to: "/d/old/f")
        try disk.writeAtomically([2], to: "/d/old/sub/g")
        let lock = try disk.lock("/d/old/LOCK", holder: "me")
        try disk.rename("/d/old", to: "/d/new")
        #expect(try bytes(disk, "/d/new/f") == [1] && bytes(disk, "/d/new/sub/g") == [2])
        #expect(try disk.exists("/d/old") == false && disk.listDirectory("/d/new").sorted() == ["LOCK", "f", "sub"])
        // The lock went with its file.
        #expect(throws: LockHeldError.self) { try disk.lock("/d/new/LOCK", holder: "rival") }
        lock.release()
        try disk.lock("/d/new/LOCK", holder: "rival").release()
        // Durable only once the parent is synced; before that a power cut keeps the old name.
        let lost = disk.afterPowerLoss(.loseUnsynced)
        #expect(try bytes(lost, "/d/old/sub/g") == [2] && lost.exists("/d/new") == false)
        try disk.syncDirectory("/d")
        let kept = disk.afterPowerLoss(.loseUnsynced)
        #expect(try bytes(kept, "/d/new/sub/g") == [2] && kept.exists("/d/old") == false)
        // A directory holding names not yet durable is refused: the model could not say where
        // they would be after a power cut.
        _ = try disk.openFile("/d/new/unsynced", .createNew)
        #expect(throws: IOError.self) { try disk.rename("/d/new", to: "/d/newer") }
        // rmdir only takes an empty directory.
        #expect(throws: IOError.self) { try disk.removeDirectory("/d/new/sub") }
        try disk.removeTree("/d/new/sub")
        #expect(try disk.exists("/d/new/sub") == false)
    }

    @Test func aCutStopsThatCallAndEveryLaterOne() throws {
        let disk = SimulatedDisk(root: "/d")
        let file = try disk.openFile("/d/a", .createNew)  // I/O 1
        disk.cutPower(atOperation: 3)
        try file.write([1], at: 0)  // I/O 2
        #expect(throws: IOError.self) { try file.sync() }  // I/O 3: the power goes
        #expect(disk.isDead)
        #expect(throws: IOError.self) { try file.readAll() }
        #expect(try bytes(disk.afterPowerLoss(.keepEverything), "/d/a") == [1])
    }

    @Test func aFailedWriteLeavesWhatItWroteAndTheFailureIsNamed() throws {
        let disk = SimulatedDisk(root: "/d")
        let file = try disk.openFile("/d/a", .createNew)
        disk.fail { $0.kind == .write && $0.numberOfKind == 2 ? ENOSPC : nil }
        try file.write([1, 2], at: 0)
        let error = #expect(throws: IOError.self) { try file.write([3, 4, 5, 6], at: 2) }
        #expect(error?.code == ENOSPC)
        #expect(try file.readAll() == [1, 2, 3, 4], "half of the failed write landed")
        #expect(disk.failedOperations.map(\.number) == [3])
        try file.write([7], at: 6)
        #expect(try file.readAll() == [1, 2, 3, 4, 0, 0, 7])
    }

    @Test func aLockIsExclusiveUntilReleasedAndGoneAfterPowerLoss() throws {
        let disk = SimulatedDisk(root: "/d")
        let lock = try disk.lock("/d/LOCK", holder: "pid=1")
        let error = #expect(throws: LockHeldError.self) { try disk.lock("/d/LOCK", holder: "pid=2") }
        #expect(error?.holder == "pid=1")
        _ = try disk.afterPowerLoss(.keepEverything).lock("/d/LOCK", holder: "pid=3")
        lock.release()
        _ = try disk.lock("/d/LOCK", holder: "pid=2")
    }
}
