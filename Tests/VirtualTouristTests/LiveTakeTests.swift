import DeviceLogs
import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Taking other devices' events into an open store (docs/SYNC.md, "Taking events live"),
/// property-based: three devices act at random, and while one's store is open it takes runs of
/// the others' own logs (as a sync through the cluster hands them over, message by message:
/// any length, sorting anywhere in the merged order) between its own actions. After every take
/// the open store's state must equal the fold of its merged history from the first event as its
/// files hold it; a store reopened must fold what it showed when it closed; and after a last
/// round of folder syncs the three devices converge with every promise of
/// ``ConvergenceRun/check(paths:appended:)``. A failing seed is printed and replays alone:
/// `VT_LIVE_TAKE_SEED=<seed>`; `VT_LIVE_TAKE_SEEDS=<n>` runs more.
@Suite(.heavy) struct LiveTakeTests {
    static let shards = 4

    static func seeds(of shard: Int) -> [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        let all: [UInt64]
        if let one = environment["VT_LIVE_TAKE_SEED"].flatMap(UInt64.init) {
            all = [one]
        } else {
            all = Array(1...(environment["VT_LIVE_TAKE_SEEDS"].flatMap(UInt64.init) ?? 60))
        }
        return all.filter { Int($0 % UInt64(shards)) == shard }
    }

    @Test(arguments: 0..<shards)
    func anOpenStoreTakingOtherDevicesEventsFoldsWhatItsFilesHold(shard: Int) async throws {
        let root = ConvergenceRun.scratchRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var failed = 0
        for seed in Self.seeds(of: shard) {
            do {
                var run = LiveTakeRun(run: ConvergenceRun(seed: seed ^ 0x5eed_7a4e, root: root + "/\(seed)"))
                let problems = try await run.play()
                if !problems.isEmpty {
                    failed += 1
                    Issue.record("seed \(seed) (replay it alone: VT_LIVE_TAKE_SEED=\(seed)): \(problems.prefix(5).joined(separator: "; "))")
                }
            } catch {
                failed += 1
                Issue.record("seed \(seed) (replay it alone: VT_LIVE_TAKE_SEED=\(seed)) threw: \(error)")
            }
            try? FileManager.default.removeItem(atPath: root + "/\(seed)")
            if failed >= 3 { break }
        }
    }

    @Test func eventsOfAnotherMapOrOfThisDeviceAreRefusedAndNothingIsTaken() async throws {
        let root = ConvergenceRun.scratchRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var run = ConvergenceRun(seed: 7, root: root + "/map")
        try await run.start()
        try await run.session(on: 0)  // events the clone's copy does not have yet
        let store = try await TouristStore.open(at: run.paths[1], options: run.options(1))
        defer { Task { try? await store.close() } }
        let before = store.state
        let own = try StoreSync.devices(of: run.paths[1]).this
        let reader = try LogReader(directory: run.paths[1] + "/log", payloadCodec: EventCodec.blockCodec)
        let identity = try #require(try reader.identity())
        let events = try Array(reader.events(from: 1).all())
        let head = try #require(try reader.head(at: reader.lastSequence()))
        await #expect(throws: DomainError.self) { try await store.take(events, from: own, identity: identity, head: head) }
        let stranger = DeviceFile(map: try DeviceID(logID: Array(repeating: 7, count: 16)), device: own.device, name: nil)
        await #expect(throws: DomainError.self) { try await store.take(events, from: stranger, identity: identity, head: head) }
        // Device 0's events with a head that is not theirs.
        let first = try LogReader(directory: run.paths[0] + "/log", payloadCodec: EventCodec.blockCodec)
        let theirs = try StoreSync.devices(of: run.paths[0]).this
        let wrong = LogHead(sequence: try first.lastSequence(), hash: head.hash)
        await #expect(throws: DomainError.self) {
            try await store.take(try Array(first.events(from: 1).all()), from: theirs, identity: try #require(try first.identity()), head: wrong)
        }
        #expect(store.state == before)
        // Those already held, with a head that is not theirs: refused too.
        let copy = try #require(try StoreSync.devices(of: run.paths[1]).copies.first { $0.id == theirs.device })
        let old = try Array(first.events(from: 1, through: copy.head.sequence).all())
        await #expect(throws: DomainError.self) {
            try await store.take(old, from: theirs, identity: try #require(try first.identity()), head: LogHead(sequence: copy.head.sequence, hash: head.hash))
        }
        let firstLast = try first.lastSequence()
        #expect(copy.head.sequence < firstLast, "the clone's copy of device 0 is as the clone made it")
    }
}

/// One seeded history of three devices that take each other's events live.
struct LiveTakeRun {
    var run: ConvergenceRun

    mutating func play() async throws -> [String] {
        try await run.start()
        var problems: [String] = []
        for _ in 0..<Int.random(in: 3...6, using: &run.random) {
            let device = Int.random(in: 0..<3, using: &run.random)
            if Int.random(in: 0..<5, using: &run.random) == 0 {
                try await run.sync(device, (device + 1) % 3, interruptedAt: nil)
            } else {
                problems += try await liveSession(on: device)
            }
            if !problems.isEmpty { return problems }
        }
        for (a, b) in [(0, 1), (1, 2), (2, 0)] { try await run.sync(a, b, interruptedAt: nil) }
        return try ConvergenceRun.check(paths: run.paths, appended: run.appended)
    }

    /// Opens one device's store and, between its own actions, takes runs of the others' logs.
    mutating func liveSession(on device: Int) async throws -> [String] {
        let path = run.paths[device]
        let store = try await TouristStore.open(at: path, options: run.options(device))
        var problems: [String] = []
        for _ in 0..<Int.random(in: 4...14, using: &run.random) {
            run.clocks[device].advance(microseconds: Int64.random(in: 0...2_000_000, using: &run.random))
            if Bool.random(using: &run.random) {
                if try await run.act(on: store) { run.appended += 1 }
                continue
            }
            let other = (device + Int.random(in: 1...2, using: &run.random)) % 3
            guard try await take(from: other, into: store, at: path) else { continue }
            let folded = try Self.foldFromTheStart(of: path)
            if store.state != folded {
                problems.append("device\(device) after taking device\(other)'s events shows another state than its files fold")
                break
            }
        }
        let shown = store.state
        try await store.close()
        let reopened = try await TouristStore.open(at: path, options: run.options(device))
        if reopened.state != shown { problems.append("device\(device) reopened folds another state than it showed") }
        try await reopened.close()
        return problems
    }

    /// Takes a run of `other`'s own log after what the store's copy holds; false when there
    /// was nothing new.
    mutating func take(from other: Int, into store: TouristStore, at path: String) async throws -> Bool {
        let source = try LogReader(directory: run.paths[other] + "/log", payloadCodec: EventCodec.blockCodec)
        let last = try source.lastSequence()
        let file = try StoreSync.devices(of: run.paths[other]).this
        let held = try StoreSync.devices(of: path).copies.first { $0.id == file.device }?.head.sequence ?? 0
        guard last > held else { return false }
        let end = UInt64.random(in: held + 1...last, using: &run.random)
        let events = try Array(source.events(from: held + 1, through: end).all())
        let head = try #require(try source.head(at: end))
        try await store.take(events, from: file, identity: try #require(try source.identity()), head: head)
        return true
    }

    /// The fold of every log of the store from the first event, its own log as far as it goes.
    static func foldFromTheStart(of path: String) throws -> TouristState {
        guard let history = try MergedHistory.open(store: path, fileSystem: PosixFileSystem()) else {
            throw ConvergenceFailure("\(path) holds no other device's log after a take")
        }
        return try MergedHistory(local: history.local, logs: history.logs, fileSystem: history.fileSystem).fold().state
    }
}

extension LogCursor {
    /// Every event the cursor still gives.
    func all() throws -> [LogEvent] {
        var events: [LogEvent] = []
        while let event = try next() { events.append(event) }
        return events
    }
}
