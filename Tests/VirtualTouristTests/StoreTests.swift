@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

@Suite struct StoreTests {
    /// Writes a generated story through a store (event by event, through the rules).
    func write(_ story: StoryGenerator, to folder: String, snapshotInterval: UInt64) async throws {
        let store = try await TouristStore.open(at: folder, options: storeOptions(snapshotInterval: snapshotInterval))
        try storeFakePhotos(store)
        for recorded in story.events { try await store.record(recorded.event, cause: recorded.cause) }
        #expect(store.state == fold(story.events))
        try await store.close()
    }

    @Test(.heavy, arguments: [(11 as UInt64, 50 as UInt64), (12, 333), (13, 100_000)])
    func reopeningGivesTheFoldFromScratch(_ seed: UInt64, _ interval: UInt64) async throws {
        let folder = TemporaryFolder("reopen")
        var story = StoryGenerator(seed: seed)
        story.generate(1_200)
        try await write(story, to: folder.path, snapshotInterval: interval)
        let expected = fold(story.events)

        let store = try await TouristStore.open(at: folder.path, options: storeOptions(snapshotInterval: interval))
        #expect(store.state == expected)
        // Closing wrote a snapshot at the end, so nothing is replayed.
        #expect(store.report.snapshot == 1_200)
        #expect(store.report.replayedEvents == 0)
        #expect(store.report.skippedSnapshots.isEmpty)
        // Retention: one snapshot per bucket of `interval` events, plus the newest.
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.sub("snapshots")).sorted()
            .compactMap { UInt64($0.prefix(20)) }
        #expect(kept.last == 1_200)
        #expect(Set(kept.dropLast().map { $0 / interval }).count == kept.count - 1, "\(kept)")
        #expect(kept.count <= Int(1_200 / interval) + 1)
        try await store.close()
    }

    /// Replay from scratch equals snapshot plus tail, at every snapshot the store keeps.
    @Test func snapshotPlusTailEqualsReplayFromScratch() async throws {
        let folder = TemporaryFolder("tail")
        var story = StoryGenerator(seed: 21)
        story.generate(900)
        try await write(story, to: folder.path, snapshotInterval: 100)
        let reader = try LogReader(directory: folder.sub("log"), payloadCodec: EventCodec.blockCodec)
        let snapshots = SnapshotFolder(path: folder.sub("snapshots"), fileSystem: PosixFileSystem(), interval: 100)
        let sequences = try snapshots.sequences()
        #expect(sequences.count >= 9)
        for sequence in sequences {
            let (_, base) = try snapshots.load(sequence)
            let tail = try TouristStore.replay(reader, from: base, through: 900)
            #expect(tail == fold(story.events), "from the snapshot at \(sequence)")
        }
    }

    /// A folder reads each snapshot into the buffer of the one before (docs/BENCHMARKS.md): in
    /// any order of sizes, each load is the file's state, and states loaded before are untouched
    /// by the loads after them.
    @Test func oneFolderLoadsSnapshotsInAnyOrderIntoOneBuffer() async throws {
        let folder = TemporaryFolder("reload")
        var story = StoryGenerator(seed: 23)
        story.generate(900)
        try await write(story, to: folder.path, snapshotInterval: 100)
        let snapshots = SnapshotFolder(path: folder.sub("snapshots"), fileSystem: PosixFileSystem(), interval: 100)
        let sequences = try snapshots.sequences()
        try #require(sequences.count >= 3)
        let order = [sequences.last!, sequences.first!, sequences[sequences.count / 2], sequences.last!, sequences.first!]
        var loaded: [TouristState] = []
        for sequence in order { loaded.append(try snapshots.load(sequence).1) }
        for (sequence, state) in zip(order, loaded) {
            let fresh = SnapshotFolder(path: folder.sub("snapshots"), fileSystem: PosixFileSystem(), interval: 100)
            #expect(state == (try fresh.load(sequence).1), "snapshot \(sequence)")
            #expect(state == fold(story.events.prefix(Int(sequence))), "snapshot \(sequence)")
        }
    }

    /// `readAll(into:)` leaves exactly the file's bytes in the buffer, whether the buffer was
    /// larger, smaller or empty before.
    @Test func readingAWholeFileIntoABufferKeepsOnlyItsBytes() throws {
        let folder = TemporaryFolder("read-into")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let fileSystem = PosixFileSystem()
        var buffer: [UInt8] = []
        for (index, size) in [5_000, 10, 0, 4_000, 70_000, 1].enumerated() {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            let path = folder.sub("file-\(index)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let file = try fileSystem.openFile(path, .readOnly)
            try file.readAll(into: &buffer)
            try file.close()
            #expect(buffer == bytes, "file \(index) of \(size) bytes")
        }
    }

    @Test func aDamagedSnapshotIsReportedAndSkipped() async throws {
        let folder = TemporaryFolder("damaged")
        var story = StoryGenerator(seed: 31)
        story.generate(500)
        try await write(story, to: folder.path, snapshotInterval: 200)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.sub("snapshots")).sorted()
        #expect(names == ["00000000000000000200.snap", "00000000000000000400.snap", "00000000000000000500.snap"])
        var newest = Array(try Data(contentsOf: URL(fileURLWithPath: folder.sub("snapshots/\(names[2])"))))
        newest[newest.count / 2] ^= 0xFF
        try Data(newest).write(to: URL(fileURLWithPath: folder.sub("snapshots/\(names[2])")))

        let store = try await TouristStore.open(at: folder.path, options: storeOptions(snapshotInterval: 200))
        #expect(store.state == fold(story.events))
        #expect(store.report.snapshot == 400)
        #expect(store.report.replayedEvents == 100)
        #expect(store.report.skippedSnapshots.map(\.file) == [folder.sub("snapshots/\(names[2])")])
        #expect(store.report.skippedSnapshots.first?.reason.contains("checksum") == true)
        try await store.close()
    }

    /// The newest snapshot is loaded while the log recovers (docs/BENCHMARKS.md); when the
    /// recovery cuts a torn tail back past it, that snapshot lies beyond the log and is not
    /// used: the state is the fold of the events that are left.
    @Test func aSnapshotPastTheRecoveredLogIsNotUsed() async throws {
        let folder = TemporaryFolder("past")
        var story = StoryGenerator(seed: 43)
        story.generate(300)
        try await write(story, to: folder.path, snapshotInterval: 100)
        #expect(FileManager.default.fileExists(atPath: folder.sub("snapshots/00000000000000000300.snap")))
        // Tear the last record of the active segment (its preallocated zeros stay after it).
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.sub("log")).filter { $0.hasSuffix(".seg") }.max())
        let path = folder.sub("log/" + segment)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let dataEnd = try #require(bytes.lastIndex { $0 != 0 }) + 1
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(dataEnd - 3))
        try handle.close()

        let store = try await TouristStore.open(at: folder.path, options: storeOptions(snapshotInterval: 100))
        try storeFakePhotos(store)
        #expect(store.report.logRecovery.cutTail != nil)
        #expect(store.lastSequence < 300)
        #expect(store.report.snapshot.map { $0 <= store.lastSequence } ?? true, "snapshot \(String(describing: store.report.snapshot))")
        #expect(store.state == fold(story.events.prefix(Int(store.lastSequence))))
        try await store.close()
    }

    /// A snapshot from another history of the log (the log was cut back and written again) is
    /// never applied to it.
    @Test func aSnapshotOfAnotherHistoryIsNotUsed() async throws {
        let folder = TemporaryFolder("history")
        var story = StoryGenerator(seed: 41)
        story.generate(300)
        try await write(story, to: folder.path, snapshotInterval: 1_000)
        // Keep the snapshot at 300, then rebuild the log with different events 1...300.
        let kept = try Data(contentsOf: URL(fileURLWithPath: folder.sub("snapshots/00000000000000000300.snap")))
        try FileManager.default.removeItem(atPath: folder.path)
        var other = StoryGenerator(seed: 42)
        other.generate(300)
        try await write(other, to: folder.path, snapshotInterval: 1_000)
        try kept.write(to: URL(fileURLWithPath: folder.sub("snapshots/00000000000000000300.snap")))

        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        try storeFakePhotos(store)
        #expect(store.state == fold(other.events))
        #expect(store.report.skippedSnapshots.first?.reason.contains("another history") == true)
        #expect(store.report.replayedEvents == 300)
        try await store.close()
    }

    /// After a crash the newest snapshot lies before the log's end, and the open looks up the
    /// log's head there beside the snapshot's load: the snapshot is used when the head is its
    /// own, and skipped when it is another history's.
    @Test func aSnapshotBeforeTheLogsEndIsCheckedAgainstTheHeadLookedUpBesideItsLoad() async throws {
        func record(_ events: some Sequence<RecordedEvent>, to folder: String) async throws {
            let store = try await TouristStore.open(at: folder, options: storeOptions(snapshotInterval: 1_000))
            try storeFakePhotos(store)
            for recorded in events { try await store.record(recorded.event, cause: recorded.cause) }
            try await store.close()
        }
        func keepOnlySnapshot(_ sequence: UInt64, in folder: TemporaryFolder) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.sub("snapshots")) where name != SnapshotFile.name(for: sequence) {
                try FileManager.default.removeItem(atPath: folder.sub("snapshots/" + name))
            }
        }
        let folder = TemporaryFolder("crashed-snapshot")
        var story = StoryGenerator(seed: 43)
        story.generate(400)
        try await record(story.events.prefix(300), to: folder.path)
        try await record(story.events.dropFirst(300), to: folder.path)
        try keepOnlySnapshot(300, in: folder)
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        #expect(store.report.snapshot == 300 && store.report.skippedSnapshots.isEmpty)
        #expect(store.report.replayedEvents == UInt64(story.events.count - 300))
        #expect(store.state == fold(story.events))
        try await store.close()

        // The same snapshot beside another history of 400 events.
        let kept = try Data(contentsOf: URL(fileURLWithPath: folder.sub("snapshots/00000000000000000300.snap")))
        try FileManager.default.removeItem(atPath: folder.path)
        var other = StoryGenerator(seed: 44)
        other.generate(400)
        try await record(other.events, to: folder.path)
        try keepOnlySnapshot(300, in: folder)
        try kept.write(to: URL(fileURLWithPath: folder.sub("snapshots/00000000000000000300.snap")))
        let reopened = try await TouristStore.open(at: folder.path, options: storeOptions())
        #expect(reopened.report.snapshot == nil)
        #expect(reopened.report.skippedSnapshots.first?.reason.contains("another history") == true)
        #expect(reopened.report.replayedEvents == UInt64(other.events.count))
        #expect(reopened.state == fold(other.events))
        try await reopened.close()
    }

    /// After a crash the newest snapshot, the last clean close's, lies where the crashed writer
    /// started, and its tail checkpoint says so (docs/FORMAT.md, "Tail checkpoint": the start):
    /// the open takes the head there from it. A start whose head is wrong makes the open pass
    /// over that snapshot (the state still right) and refuse changes until the store is reopened.
    static let someRegion = MapRegion(center: Coordinate(latitude: 2, longitude: 3), latitudeSpan: 1, longitudeSpan: 1)

    @Test func anOpenAfterACrashTakesTheSnapshotsHeadFromTheTailCheckpoint() async throws {
        var options = storeOptions(snapshotInterval: 1_000, durability: .always)
        options.log.tailCheckpointInterval = 1 << 10
        let folder = TemporaryFolder("crash-start"), crashed = TemporaryFolder("crash-start-copy")
        var story = StoryGenerator(seed: 45)
        story.generate(400)
        let first = try await TouristStore.open(at: folder.path, options: options)
        try storeFakePhotos(first)
        for recorded in story.events.prefix(300) { try await first.record(recorded.event, cause: recorded.cause) }
        try await first.close()
        let second = try await TouristStore.open(at: folder.path, options: options)
        try storeFakePhotos(second)
        for recorded in story.events.dropFirst(300) { try await second.record(recorded.event, cause: recorded.cause) }
        // The crash: the files as they are while the store is open.
        try FileManager.default.copyItem(atPath: folder.path, toPath: crashed.path)
        try await second.close()
        let checkpoint = try #require(
            try FileManager.default.contentsOfDirectory(atPath: crashed.sub("log")).first { $0.hasSuffix(".head") })
        let good = try Data(contentsOf: URL(fileURLWithPath: crashed.sub("log/" + checkpoint)))
        #expect(good.count == 156 && good[96..<104].contains { $0 != 0 }, "a running checkpoint with a start")

        let store = try await TouristStore.open(at: crashed.path, options: options)
        #expect(store.report.snapshot == 300 && store.report.skippedSnapshots.isEmpty)
        #expect(store.report.replayedEvents == UInt64(story.events.count - 300))
        #expect(store.state == fold(story.events))
        try await store.changeRegion(to: Self.someRegion)
        try await store.close()

        // The same crash with the start's head changed (its checksum made right again).
        try FileManager.default.removeItem(atPath: crashed.path)
        try FileManager.default.copyItem(atPath: folder.path, toPath: crashed.path)
        try FileManager.default.removeItem(atPath: crashed.sub("snapshots/" + SnapshotFile.name(for: 400)))
        var forged = [UInt8](good)
        forged[120] ^= 0x01
        withUnsafeBytes(of: CRC32C.checksum(forged[0..<152]).littleEndian) { forged.replaceSubrange(152..<156, with: $0) }
        for name in try FileManager.default.contentsOfDirectory(atPath: crashed.sub("log")) where name.hasSuffix(".head") {
            try FileManager.default.removeItem(atPath: crashed.sub("log/" + name))
        }
        try Data(forged).write(to: URL(fileURLWithPath: crashed.sub("log/" + checkpoint)))
        let misled = try await TouristStore.open(at: crashed.path, options: options)
        #expect(misled.report.snapshot == nil)
        #expect(misled.report.skippedSnapshots.first?.reason.contains("another history") == true)
        #expect(misled.state == fold(story.events))
        await #expect(throws: DomainError.self) { try await misled.changeRegion(to: Self.someRegion) }
        try? await misled.close()
        let reopened = try await TouristStore.open(at: crashed.path, options: options)
        #expect(reopened.state == fold(story.events))
        try await reopened.changeRegion(to: Self.someRegion)
        try await reopened.close()
    }

    /// Opening reads the newest snapshot and the tail only: the events replayed do not grow
    /// with the log.
    @Test func openingReplaysOnlyTheTail() async throws {
        let folder = TemporaryFolder("open")
        let options = storeOptions(snapshotInterval: 1_000)
        let store = try await TouristStore.open(at: folder.path, options: options)
        let pin = try await store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
        for step in 0..<5_000 {
            try await store.changeRegion(to: MapRegion(center: Coordinate(latitude: Double(step % 80), longitude: 1), latitudeSpan: 1, longitudeSpan: 1))
        }
        // Wait for the background snapshot of the 5,000s, then simulate a crash: no close.
        func newestSnapshot() throws -> UInt64 {
            try FileManager.default.contentsOfDirectory(atPath: folder.sub("snapshots")).compactMap { UInt64($0.prefix(20)) }.max() ?? 0
        }
        // The snapshot an append started is written on its own task: a job waits for it.
        try await store.processor.exclusively { access in await access.snapshotsSettled() }
        let background = try newestSnapshot()
        #expect(background >= 5_000, "a snapshot was written when the log passed 5,000 events")
        try await store.dragPin(pin, to: Coordinate(latitude: 2, longitude: 2))
        let expected = store.state
        try await store.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.sub("snapshots"))
        where (UInt64(name.prefix(20)) ?? 0) > background {
            try FileManager.default.removeItem(atPath: folder.sub("snapshots/\(name)"))  // the one written on close
        }

        let reopened = try await TouristStore.open(at: folder.path, options: options)
        #expect(reopened.state == expected)
        #expect(reopened.report.snapshot == background)
        #expect(reopened.report.replayedEvents == 5_002 - background)
        #expect(reopened.report.replayedEvents <= 2)
        try await reopened.close()
    }

    /// Concurrent actions are checked one after another against the state the earlier ones
    /// leave, and written together.
    @Test func concurrentActionsAreCheckedInTurnAndWrittenTogether() async throws {
        let folder = TemporaryFolder("concurrent")
        var options = storeOptions(durability: .always)
        options.pinIDs = RandomPinIDs()
        let store = try await TouristStore.open(at: folder.path, options: options)
        let pins = try await withThrowingTaskGroup(of: PinID.self) { group in
            for index in 0..<200 {
                group.addTask { try await store.dropPin(at: Coordinate(latitude: Double(index % 90), longitude: 0)) }
            }
            return try await group.reduce(into: [PinID]()) { $0.append($1) }
        }
        #expect(Set(pins).count == 200)
        #expect(store.state.pins.count == 200)
        // Racing removals of one pin: exactly one wins.
        let target = pins[0]
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 { group.addTask { (try? await store.removePin(target)) != nil } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        try await store.close()
        let report = try LogVerifier.verify(directory: folder.sub("log"), payloadCodec: EventCodec.blockCodec)
        #expect(report.events == 201)
        #expect(report.records < 201, "actions that waited together were written as one record")
    }

    /// A failed sync leaves the events' fate to the next open: the store keeps the state before
    /// them, refuses further actions with the log's reason (the log refuses until reopened),
    /// and the reopened store has the events or not, whole.
    @Test func actionsAfterAFailedSyncAreRefusedAndTheStoreKeepsItsState() async throws {
        let folder = TemporaryFolder("failed-sync")
        let fileSystem = InstrumentedFileSystem()
        let store = try await TouristStore.open(at: folder.path, options: storeOptions(durability: .always), fileSystem: fileSystem)
        let pin = try await store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
        let before = store.state
        fileSystem.failure = { operation, path, _ in operation == "sync" && path.hasSuffix(".seg") ? EIO : nil }
        await expectDomainError(.storage) { try await store.dragPin(pin, to: Coordinate(latitude: 2, longitude: 2)) }
        fileSystem.failure = nil
        #expect(store.state == before)
        let refused = await expectDomainError(.storage) { try await store.dropPin(at: Coordinate(latitude: 3, longitude: 3)) }
        #expect(refused?.message.contains("reopen") == true)
        #expect(store.state == before)
        try? await store.close()
        let reopened = try await TouristStore.open(at: folder.path, options: storeOptions())
        // The drag is there whole, or not at all; the refused drop never is.
        let moved = reopened.state.pins[pin]?.coordinate == Coordinate(latitude: 2, longitude: 2)
        #expect(moved || reopened.state == before)
        #expect(reopened.state.pins.count == 1)
        try await reopened.close()
    }

    /// An action the rules refuse says so, also when the record beside it failed to sync: it
    /// appended nothing either way. (The writer is held in the first record's sync while the next
    /// two actions queue, so that they share the record whose sync fails.)
    @Test(.timeLimit(.minutes(1))) func aRefusedActionKeepsItsReasonWhenTheRecordBesideItFails() async throws {
        let folder = TemporaryFolder("refused-beside-failure")
        let fileSystem = InstrumentedFileSystem()
        let store = try await TouristStore.open(at: folder.path, options: storeOptions(durability: .always), fileSystem: fileSystem)
        let pin = try await store.dropPin(at: Coordinate(latitude: 1, longitude: 1))
        let held = fileSystem.count("sync", "seg") + 1
        let release = DispatchSemaphore(value: 0)
        fileSystem.failure = { operation, path, count in
            guard operation == "sync", path.hasSuffix(".seg") else { return nil }
            if count == held { release.wait() }
            return count == held + 1 ? EIO : nil
        }
        let first = Task { try await store.dragPin(pin, to: Coordinate(latitude: 2, longitude: 2)) }
        await fileSystem.reached("sync", "seg", count: held)
        let beside = Task { try await store.dragPin(pin, to: Coordinate(latitude: 3, longitude: 3)) }
        let refused = Task { try await store.removePin(PinID(0xDEAD)) }
        await store.log.core.queued(reach: 2)
        release.signal()
        _ = try await first.value
        let besideError = await #expect(throws: DomainError.self) { try await beside.value }
        #expect(besideError?.code == .storage)
        let refusedError = await #expect(throws: DomainError.self) { try await refused.value }
        #expect(refusedError?.code == .unknownPin, "\(String(describing: refusedError))")
        fileSystem.failure = nil
        try? await store.close()
    }

    @Test func changesStreamEveryAcceptedGroupWithItsState() async throws {
        let folder = TemporaryFolder("changes")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        try storeFakePhotos(store)
        let changes = store.changes()
        let listener = Task {
            var seen: [(UInt64, Int)] = []
            for await change in changes {
                seen.append((change.state.sequence, change.state.pins.count))
                #expect(change.events.last?.sequence == change.state.sequence)
            }
            return seen
        }
        let pin = try await store.dropPin(at: Coordinate(latitude: 5, longitude: 5))
        await expectDomainError(.unknownPin) { try await store.removePin(PinID(404)) }
        try await store.removePin(pin)
        try await store.close()
        let seen = await listener.value
        #expect(seen.map(\.0) == [1, 2])
        #expect(seen.map(\.1) == [1, 0])
    }

    @Test func aFolderThatIsNotAStoreIsRefused() async throws {
        let folder = TemporaryFolder("foreign")
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: folder.sub("notes.txt")))
        let error = await expectDomainError(.notAStore) { try await TouristStore.open(at: folder.path) }
        #expect(error?.message.contains("notes.txt") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.txt"])
        await expectDomainError(.notAStore) { try await TouristStore.open(at: folder.sub("notes.txt")) }

        // A second store on the same folder: the log's lock says who holds it.
        let store = try await TouristStore.open(at: folder.sub("store"), options: storeOptions())
        let locked = await expectDomainError(.storage) { try await TouristStore.open(at: folder.sub("store")) }
        #expect((locked?.cause as? LogError)?.code == .locked)
        try await store.close()
        await expectDomainError(.closed) { try await store.dropPin(at: Coordinate(latitude: 0, longitude: 0)) }
    }

    /// A store dropped without `close` releases its log, so the folder can be opened again.
    @Test func aStoreDroppedWithoutClosingReleasesTheFolder() async throws {
        let folder = TemporaryFolder("dropped")
        do {
            let store = try await TouristStore.open(at: folder.path, options: storeOptions())
            try storeFakePhotos(store)
            try await store.dropPin(at: Coordinate(latitude: 3, longitude: 4))
        }
        // The dropped store lets go of the lock once its last action has returned: wait for that,
        // up to a minute (a bound on a hang, not a speed).
        var reopened: TouristStore? = nil
        let deadline = ContinuousClock.now + .seconds(60)
        while reopened == nil, ContinuousClock.now < deadline {
            reopened = try? await TouristStore.open(at: folder.path, options: storeOptions())
            if reopened == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let store = try #require(reopened)
        #expect(store.state.pins.count == 1)
        try await store.close()
    }
}
