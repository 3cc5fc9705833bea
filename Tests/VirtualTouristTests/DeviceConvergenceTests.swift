import DeviceLogs
import EventLog
import FileIO
import Foundation
import SeededRandom
import StorageTestSupport
import Synchronization
import Testing
@testable import VirtualTourist

/// Convergence, property-based (docs/DEVICES.md): three devices of one map act at random (every
/// action, downloads landing late, New Collection, removals, forgets), syncing in random pairs and
/// orders, some syncs failing part-way at a random call; after a last round of syncs every
/// device has the same merged history, the same state (but for the map region, each device's
/// own), the same heads, and the rules' promises hold: nothing of a forgotten place is left whole
/// in any log of any device. A failing seed is printed and replays
/// alone: `VT_CONVERGENCE_SEED=<seed>`; `VT_CONVERGENCE_SEEDS=<n>` runs more. The seeds are dealt
/// to ten shards that the suite runs beside its other tests, so that no one long test is last.
@Suite(.heavy) struct DeviceConvergenceTests {
    static let shards = 10

    static func seeds(of shard: Int) -> [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        let all: [UInt64]
        if let one = environment["VT_CONVERGENCE_SEED"].flatMap(UInt64.init) {
            all = [one]
        } else {
            all = Array(1...(environment["VT_CONVERGENCE_SEEDS"].flatMap(UInt64.init) ?? 1_000))
        }
        return all.filter { Int($0 % UInt64(shards)) == shard }
    }

    @Test(arguments: 0..<shards)
    func threeDevicesConvergeWhateverTheyDoAndHoweverTheySync(shard: Int) async throws {
        let root = ConvergenceRun.scratchRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var failed: [UInt64] = []
        for seed in Self.seeds(of: shard) {
            do {
                var run = ConvergenceRun(seed: seed, root: root + "/\(seed)")
                let problems = try await run.play()
                if !problems.isEmpty {
                    failed.append(seed)
                    Issue.record("seed \(seed) (replay it alone: VT_CONVERGENCE_SEED=\(seed)): \(problems.prefix(5).joined(separator: "; "))")
                }
            } catch {
                failed.append(seed)
                Issue.record("seed \(seed) (replay it alone: VT_CONVERGENCE_SEED=\(seed)) threw: \(error)")
            }
            try? FileManager.default.removeItem(atPath: root + "/\(seed)")
            if failed.count >= 3 { break }
        }
    }
}

/// One seeded history of three devices.
struct ConvergenceRun {
    let seed: UInt64
    let root: String
    var random: SplitMix
    var paths: [String] = []
    var clocks: [TestClock] = []
    var idGenerators: [SeededPinIDs] = []
    /// Every event each device appended: none may be lost.
    var appended = 0

    init(seed: UInt64, root: String) {
        self.seed = seed
        self.root = root
        random = SplitMix(seed: seed)
    }

    /// A folder on a memory file system when there is one: the test writes thousands of small
    /// stores, and the behaviour checked does not depend on the disk.
    static func scratchRoot() -> String {
        let shm = "/dev/shm"
        var isDirectory: ObjCBool = false
        let base = FileManager.default.fileExists(atPath: shm, isDirectory: &isDirectory) && isDirectory.boolValue
            ? shm + "/vt-convergence-\(UUID().uuidString.prefix(8))" : TemporaryFolder.uniquePath("convergence")
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        return base
    }

    func options(_ device: Int) -> StoreOptions {
        var options = StoreOptions()
        options.collectionInterval = nil
        options.log.clock = clocks[device]
        options.log.durability = .none
        options.log.compactsInBackground = false
        // Copies' blocks in codec 1: what is checked does not depend on the codec, and codec 2's
        // encoder is most of a debug build's sync.
        options.log.payloadCodec = nil
        options.pinIDs = idGenerators[device]
        // Every session's close writes a merged snapshot, which later opens and syncs start
        // from (more often, written on the cooperative pool, they starved the suite's network
        // tests).
        return options
    }

    /// Plays the history and returns what broke a promise (empty: converged).
    mutating func play() async throws -> [String] {
        try await start()
        for _ in 0..<Int.random(in: 3...7, using: &random) {
            if Int.random(in: 0..<10, using: &random) < 6 {
                try await session(on: Int.random(in: 0..<3, using: &random))
            } else {
                let a = Int.random(in: 0..<3, using: &random)
                let b = (a + Int.random(in: 1...2, using: &random)) % 3
                try await sync(a, b, interruptedAt: Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 1...60, using: &random) : nil)
            }
        }
        // Each sync goes both ways, so one ring brings every device everything.
        for (a, b) in [(0, 1), (1, 2), (2, 0)] { try await sync(a, b, interruptedAt: nil) }
        var problems = try Self.check(paths: paths, appended: appended)
        // Each device opens from its newest merged snapshot that the logs still begin with:
        // the same state as the fold of every log from the first event.
        for device in 0..<3 {
            let store = try await TouristStore.open(at: paths[device], options: options(device))
            let (opened, from) = (store.state, store.report.snapshot)
            try await store.close()
            if let history = try MergedHistory.open(store: paths[device], fileSystem: PosixFileSystem()),
                try MergedHistory(local: history.local, logs: history.logs, fileSystem: history.fileSystem).fold().state != opened {
                problems.append("device\(device) opens from its snapshot at \(from.map(String.init) ?? "none") to another state than the fold from the first event")
            }
        }
        return problems
    }

    /// Three devices' folders, clocks and pin ids: the first device starts the map with a
    /// session of its own, the others are its clones.
    mutating func start() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for device in 0..<3 {
            // Clocks a few seconds apart, each moving on by a little at every reading.
            let skew = Int64.random(in: -3_000_000...3_000_000, using: &random)
            clocks.append(TestClock(1_800_000_000_000_000 + skew, stepPerReading: Int64.random(in: 1...500, using: &random)))
            idGenerators.append(SeededPinIDs(seed: seed &* 31 &+ UInt64(device)))
            paths.append(root + "/device\(device)")
        }
        try await session(on: 0)
        for device in 1..<3 {
            _ = try StoreSync.clone(from: paths[0], to: paths[device], name: "device \(device)", options: options(device))
        }
    }

    /// One sync, perhaps failing at its `interruptedAt`-th file-system call, between the
    /// finishing of forgets that `vt sync` does before and after it.
    mutating func sync(_ a: Int, _ b: Int, interruptedAt: Int?) async throws {
        for device in [a, b] { _ = try await StoreSync.finishForgets(in: paths[device], options: options(device)) }
        let fileSystem = InstrumentedFileSystem()
        if let interruptedAt {
            let calls = Mutex(0)
            fileSystem.failure = { operation, _, _ in
                guard ["write", "sync", "rename", "mkdir", "syncdir", "open"].contains(operation) else { return nil }
                return calls.withLock { $0 += 1; return $0 } == interruptedAt ? EIO : nil
            }
        }
        do {
            let report = try StoreSync.sync(store: paths[a], with: paths[b], options: options(a), fileSystem: fileSystem)
            if interruptedAt == nil, !report.refused.isEmpty { throw ConvergenceFailure("sync \(a)↔\(b) refused: \(report.refused)") }
        } catch let failure as ConvergenceFailure {
            throw failure
        } catch where interruptedAt != nil {
            // Failed part-way, as a full disk or a failing drive would stop it: the next sync finishes.
        }
        for device in [a, b] { _ = try await StoreSync.finishForgets(in: paths[device], options: options(device)) }
    }

    /// A device opens its store, acts a few times, and closes it.
    mutating func session(on device: Int) async throws {
        let store = try await TouristStore.open(at: paths[device], options: options(device))
        for _ in 0..<Int.random(in: 3...12, using: &random) {
            clocks[device].advance(microseconds: Int64.random(in: 0...2_000_000, using: &random))
            if try await act(on: store) { appended += 1 }
        }
        try await store.close()
    }

    /// One random action; false when the rules refused it or it had nothing to act on (nothing
    /// appended). The pin is picked among those the action can apply to, so that albums live
    /// whole lives: New Collection needs one whose downloads are all done.
    mutating func act(on store: TouristStore) async throws -> Bool {
        let state = store.state
        let local = store.localDevice
        func pick(_ eligible: (Pin) -> Bool) -> Pin? {
            let pins = state.pinsInDropOrder.filter(eligible)
            return pins.isEmpty ? nil : pins[Int.random(in: 0..<pins.count, using: &random)]
        }
        do {
            // A map with few pins gets more first.
            switch state.pins.count < 3 && Bool.random(using: &random) ? 0 : Int.random(in: 0..<16, using: &random) {
            case 0, 1:
                _ = try await store.dropPin(at: place())
            case 2:
                guard let pin = pick({ _ in true }) else { return false }
                try await store.dragPin(pin.id, to: place())
            case 3:
                guard let pin = pick({ _ in true }), Bool.random(using: &random) else { return false }
                try await store.removePin(pin.id)
            case 4:
                try await store.changeRegion(to: MapRegion(center: place(), latitudeSpan: 3, longitudeSpan: 4))
            case 5, 6:
                guard let pin = pick({ _ in true }) else { return false }
                try await store.requestAlbum(for: pin.id, perPage: 4)
            case 7, 8:
                guard let pin = pick({ $0.album.phase == .listing && $0.album.requestedBy == local }), let request = pin.album.request
                else { return false }
                // Listings overlap between collections and devices: the pool is small.
                let start = Int.random(in: 0..<4, using: &random)
                let photos = (start..<start + 4).map { ListedPhoto(remoteID: "photo\($0)", url: "https://photos.example/\($0).jpg", title: "p\($0)") }
                try await store.recordListing(
                    PhotoListing(pin: pin.id, collection: request.collection, page: request.page, pages: 3, total: 12, photos: photos),
                    cause: pin.album.requestedAt)
            case 9, 10:
                guard let pin = pick({ $0.album.phase == .listed && $0.album.requestedBy == local && $0.album.slots.contains { !$0.isResolved } })
                else { return false }
                // Downloads land one to all at a time, some long after their listing.
                for slot in pin.album.slots.filter({ !$0.isResolved }).prefix(Int.random(in: 1...4, using: &random)) {
                    let bytes = fakePhoto(UInt64(slot.photo.remoteID.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
                    let lease = try store.storePhoto(bytes)
                    defer { lease.release() }
                    try await store.recordDownload(
                        DownloadedPhoto(pin: pin.id, collection: pin.album.collection, slot: slot.number, digest: lease.digest,
                            byteCount: UInt64(bytes.count), mediaType: "image/jpeg"),
                        cause: pin.album.listedAt)
                }
            case 11, 12:
                guard let pin = pick({ !$0.album.slots.isEmpty }) else { return false }
                try await store.removePhoto(pin.album.slots[Int.random(in: 0..<pin.album.slots.count, using: &random)].number, from: pin.id)
            case 13, 14:
                guard let pin = pick({ $0.album.isNewCollectionEnabled }) else { return false }
                try await store.replaceCollection(of: pin.id, page: 2, perPage: 4)
            default:
                guard let pin = pick({ _ in true }), Bool.random(using: &random) else { return false }
                try await store.forget(pin.id)
            }
            return true
        } catch let error as DomainError where error.code != .storage {
            return false
        }
    }

    mutating func place() -> Coordinate {
        Coordinate(
            latitude: Double(Int.random(in: -6000...6000, using: &random)) / 100,
            longitude: Double(Int.random(in: -17000...17000, using: &random)) / 100)
    }

    /// Every promise, compared across the three devices.
    static func check(paths: [String], appended: Int) throws -> [String] {
        var problems: [String] = []
        var histories: [[String]] = []
        var states: [TouristState] = []
        var heads: [[String: String]] = []
        var removals: Set<String> = []
        var forgotten: Set<PinID> = []
        for path in paths {
            let reader = try StoreReader.open(at: path)
            let devices = try StoreSync.devices(of: path)
            var history: [String] = []
            var claims: [RecordedEvent] = []
            // A store that holds no other device's events (the others wrote none) is a store of one.
            // The state this device shows: folded as this device (the store's own fold).
            var state = reader.hasSeveralDevices ? TouristState(localDevice: devices.this.device) : TouristState()
            try reader.forEachEvent {
                state.apply($0)
                history.append("\(($0.origin?.device ?? devices.this.device).short)#\($0.origin?.sequence ?? $0.sequence)")
                // Every photo a person removed, from the history itself (not the state's own record).
                if case .photoRemoved(let pin, _, _, let photo?) = $0.event { removals.insert("\(pin)/\(photo)") }
                if case .placeForgotten(let pin, _) = $0.event { forgotten.insert(pin) }
                if case .deviceSeen = $0.event { claims.append($0) }
            }
            // The merged order is causal: what each device said it had seen is in the copies,
            // with those heads, and earlier (docs/DEVICES.md).
            if let merged = try MergedHistory.open(store: path, fileSystem: PosixFileSystem()) {
                var verification = StoreVerification()
                StoreAudit.checkSeen(claims, in: merged, into: &verification)
                problems += verification.problems.map { "\(path): \($0)" }
            }
            histories.append(history)
            state.region = nil  // each device's own view
            state.localDevice = nil
            states.append(state)
            var known: [String: String] = [:]
            let own = try LogReader(directory: path + "/log", payloadCodec: EventCodec.blockCodec)
            // A device that has written nothing has no copy anywhere: only logs with events count.
            if try own.lastSequence() > 0 {
                known[devices.this.device.description] = try own.head(at: try own.lastSequence())!.hash.description
            }
            for copy in devices.copies { known[copy.id.description] = copy.head.hash.description }
            heads.append(known)
        }
        for path in paths {
            problems += try wholeEvents(of: forgotten, in: path).map { "\(path) holds \($0) whole, about a forgotten place" }
        }
        if histories[1] != histories[0] || histories[2] != histories[0] { problems.append("the merged histories differ") }
        if histories[0].count != Set(histories[0]).count { problems.append("an event appears twice in the merged history") }
        if heads[1] != heads[0] || heads[2] != heads[0] { problems.append("the devices' heads differ: \(heads)") }
        if states[1] != states[0] || states[2] != states[0] { problems.append("the states differ") }
        if histories[0].count < appended { problems.append("\(appended) events appended, \(histories[0].count) in the history: some were lost") }
        for pin in states[0].pins.values {
            let identities = pin.album.slots.map(\.photo.identity)
            if Set(identities).count != identities.count { problems.append("pin \(pin.id) shows a photo twice") }
            if let back = identities.first(where: { removals.contains("\(pin.id)/\($0)") }) {
                problems.append("pin \(pin.id) shows \(back), which was removed")
            }
        }
        return problems
    }

    /// The events about `pins` that some log of the store in `path` holds whole.
    static func wholeEvents(of pins: Set<PinID>, in path: String) throws -> [String] {
        guard !pins.isEmpty else { return [] }
        let devices = try StoreSync.devices(of: path)
        var found: [String] = []
        for (device, log) in [(devices.this.device, path + "/log")] + devices.copies.map({ ($0.id, $0.logPath) }) {
            let cursor = try LogReader(directory: log, payloadCodec: EventCodec.blockCodec).events(from: 1)
            while let event = try cursor.next() {
                guard !event.isErased else { continue }
                let recorded = try EventCodec.decode(event)
                if case .placeForgotten = recorded.event { continue }
                if let pin = recorded.event.pin, pins.contains(pin) { found.append("\(device.short)#\(event.sequence) (\(recorded.event.typeName))") }
            }
        }
        return found
    }
}

struct ConvergenceFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Pin ids from a seed: each device draws its own, as on a real device.
final class SeededPinIDs: PinIDGenerator, @unchecked Sendable {
    private let random: Mutex<SplitMix>
    init(seed: UInt64) { random = Mutex(SplitMix(seed: seed)) }
    func next() -> PinID { PinID(random.withLock { UInt64.random(in: 1...UInt64.max, using: &$0) }) }
}
