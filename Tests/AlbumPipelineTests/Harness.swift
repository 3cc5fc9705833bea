import AlbumPipeline
import DemoPhotoServer
import EventLog
import Foundation
import PhotoSources
import SeededRandom
import StorageTestSupport
import Synchronization
import Testing
import VirtualTourist

/// A store in a temporary folder, the demo photo server on loopback, and a pipeline between
/// them: the real parts, over real HTTP.
final class Harness: Sendable {
    let folder: String
    let serverBox: Mutex<DemoPhotoServer>
    let key: String
    let requiredKey: String?
    let catalogue: DemoCatalogue
    let storeBox = Mutex<TouristStore?>(nil)
    let pipelineBox = Mutex<AlbumPipeline?>(nil)
    let options: PipelineOptions
    let searchTimeout: Duration
    /// Kept across reopenings, so that ids stay unique.
    let pinIDs = CountingPinIDs()

    var server: DemoPhotoServer { serverBox.withLock { $0 } }
    var store: TouristStore { storeBox.withLock { $0! } }
    var pipeline: AlbumPipeline { pipelineBox.withLock { $0! } }

    static func start(
        options: PipelineOptions = Harness.defaultOptions, key: String = "demo-key", requiredKey: String? = nil,
        searchTimeout: Duration = .seconds(120), catalogue: DemoCatalogue = DemoCatalogue()
    ) async throws -> Harness {
        let server = try await DemoPhotoServer.start(requiredKey: requiredKey, catalogue: catalogue)
        let harness = Harness(
            server: server, key: key, requiredKey: requiredKey, catalogue: catalogue, options: options, searchTimeout: searchTimeout)
        try await harness.open()
        return harness
    }

    /// Runs `body` with a started harness, and finishes it whatever happens.
    static func with(
        options: PipelineOptions = Harness.defaultOptions, key: String = "demo-key", requiredKey: String? = nil,
        searchTimeout: Duration = .seconds(120), catalogue: DemoCatalogue = DemoCatalogue(),
        _ body: (Harness) async throws -> Void
    ) async throws {
        let harness = try await start(
            options: options, key: key, requiredKey: requiredKey, searchTimeout: searchTimeout, catalogue: catalogue)
        do { try await body(harness) } catch {
            await harness.finish()
            throw error
        }
        await harness.finish()
    }

    /// A timeout that a delayed answer outlasts; otherwise a bound on a hang only, so that a
    /// busy machine (all the tests run at once on two cores) never turns a slow normal answer,
    /// or an image a test holds while it releases others one by one, into a failure: 30 s was
    /// once not enough.
    static func timeout(for fault: DemoFault) -> Duration {
        if case .delay = fault { return .milliseconds(1500) }
        return .seconds(120)
    }

    static var defaultOptions: PipelineOptions {
        var options = PipelineOptions()
        options.pageNumbers = SplitMix(seed: 7)
        return options
    }

    private init(
        server: DemoPhotoServer, key: String, requiredKey: String?, catalogue: DemoCatalogue, options: PipelineOptions,
        searchTimeout: Duration
    ) {
        folder = TemporaryFolder.uniquePath("albums")
        serverBox = Mutex(server)
        self.key = key
        self.requiredKey = requiredKey
        self.catalogue = catalogue
        self.options = options
        self.searchTimeout = searchTimeout
    }

    /// Opens the store and starts a pipeline on it (again, after ``closeStore()``).
    func open(startPipeline: Bool = true) async throws {
        var storeOptions = StoreOptions()
        storeOptions.log.durability = .none
        storeOptions.collectionInterval = nil
        storeOptions.pinIDs = pinIDs
        let store = try await TouristStore.open(at: folder, options: storeOptions)
        let client = FlickrClient(key: try FlickrAPIKey(key), endpoint: server.endpoint, timeout: searchTimeout)
        // As `vt` asks the offline service: wherever it listens now.
        let source = DemoPhotoSource(server: server, client: client, downloader: ImageDownloader(timeout: searchTimeout))
        let pipeline = try AlbumPipeline(store: store, source: source, options: options)
        storeBox.withLock { $0 = store }
        pipelineBox.withLock { $0 = pipeline }
        if startPipeline { await pipeline.start() }
    }

    /// Stops the pipeline (cancelling its work) and closes the store.
    func closeStore() async throws {
        await pipeline.stop()
        try await store.close()
    }

    /// Stops the photo service and starts it again, on another port, as a restart of the
    /// program does (the store must be closed).
    func restartServer() async throws {
        let old = server
        await old.stop()
        let new = try await DemoPhotoServer.start(requiredKey: requiredKey, catalogue: catalogue)
        serverBox.withLock { $0 = new }
    }

    func finish() async {
        try? await closeStore()
        await server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Waits (at most `limit`) for a state; fails the test with what the state was instead.
    @discardableResult
    func eventually(
        _ what: String, within limit: Duration = .seconds(120), _ condition: @escaping @Sendable (TouristState) -> Bool
    ) async throws -> TouristState {
        let store = store
        do {
            return try await Self.first(within: limit) { try await store.waitForState(where: condition) }
        } catch is TimedOut {
            let albums = store.state.pinsInDropOrder.map { pin in
                let failures = pin.album.slots.compactMap { slot -> String? in
                    if case .failed(let reason) = slot.state { return "\(slot.number): \(reason)" }
                    return nil
                }
                return "\(pin.id): \(pin.album.status) (collection \(pin.album.collection)) \(failures)"
            }
            Issue.record("timed out waiting for \(what); albums: \(albums)")
            throw TimedOut()
        }
    }

    /// Waits (at most `limit`) until the pipeline has no work left and has read every event.
    func waitUntilIdle(within limit: Duration = .seconds(120)) async throws {
        let pipeline = pipeline
        do {
            try await Self.first(within: limit) { await pipeline.waitUntilIdle() }
        } catch is TimedOut {
            let activity = await pipeline.activity
            Issue.record("the pipeline was still busy: \(activity)")
            throw TimedOut()
        }
    }

    /// What `wait` returns, or ``TimedOut`` once `limit` has passed: a bound that only a hang
    /// reaches, never one that decides a passing test.
    private static func first<T: Sendable>(
        within limit: Duration, _ wait: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await wait() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TimedOut()
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Waits until the demo server holds `count` image requests at its gate.
    func waitForHeldImages(_ count: Int) async {
        await server.controls.heldImages(reach: count)
    }

    /// Every event in the log, decoded.
    func events() throws -> [RecordedEvent] {
        try store.events()
    }

    struct TimedOut: Error {}
}

/// Pin ids 1, 2, 3, …
final class CountingPinIDs: PinIDGenerator {
    private let counter = Mutex<UInt64>(0)
    func next() -> PinID { PinID(counter.withLock { $0 += 1; return $0 }) }
}

/// Places of the demo catalogue with no photos, a few, and many.
enum Places {
    static func find(_ wanted: (Int) -> Bool, skip: Int = 0) -> Coordinate {
        let place = DemoCatalogue().place(where: wanted, skipping: skip, from: (-30, 140))!
        return Coordinate(latitude: place.latitude, longitude: place.longitude)
    }

    static let empty = find { $0 == 0 }
    /// 8 to 20 photos: fewer than a page of 21.
    static let few = find { (8...20).contains($0) }
    static let otherFew = find({ (8...20).contains($0) }, skip: 1)
    static let many = find { (600...3_000).contains($0) }
    static let otherMany = find({ (600...3_000).contains($0) }, skip: 1)

    static func count(_ place: Coordinate) -> Int {
        DemoCatalogue().photoCount(latitude: place.latitude, longitude: place.longitude)
    }

    static func photoIDs(_ place: Coordinate, page: Int, perPage: Int) -> [String] {
        DemoCatalogue().photos(latitude: place.latitude, longitude: place.longitude, page: page, perPage: perPage).map(\.id)
    }
}
