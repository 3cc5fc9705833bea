import PhotoSources
import Synchronization
import VirtualTourist

/// Turns pins into albums. It watches the store's events and reacts: a settled pin gets its
/// album requested (pre-fetch); a request becomes a search, whose answer (PhotosListed) fixes
/// the placeholders; each photo is then downloaded (a few at once), stored as a blob, and
/// recorded as soon as it arrives. Failures become events too, so an album never stays
/// "downloading". Work for a collection that New Collection, a drag or a removal has replaced
/// is cancelled, and the store's rules refuse any of its results that finish anyway.
///
/// ```swift
/// let pipeline = try AlbumPipeline(store: store, source: FlickrPhotoSource(client: flickr))
/// await pipeline.start()                   // resumes what the log says is pending
/// let pin = try await store.dropPin(at: place)   // pre-fetch starts at once
/// try await pipeline.newCollection(for: pin)     // once the album is complete
/// await pipeline.stop()
/// ```
///
/// The pipeline reacts to events whoever appended them (the web page, `vt`, another
/// pipeline's run before a crash), so it keeps no state of its own that the log does not have.
public final class AlbumPipeline: Sendable {
    public let store: TouristStore
    public let source: any PhotoSource
    public let options: PipelineOptions
    let core: PipelineCore
    private let consumer = Mutex<Task<Void, Never>?>(nil)
    private let started = Mutex(false)
    private let random: SharedRandom

    /// - Throws: ``DomainError`` `.invalidArgument` for options out of range.
    public init(store: TouristStore, source: any PhotoSource, options: PipelineOptions = PipelineOptions()) throws {
        if let problem = options.problem { throw DomainError(.invalidArgument, problem) }
        self.store = store
        self.source = source
        self.options = options
        self.core = PipelineCore(store: store, source: source, options: options)
        self.random = SharedRandom(PageRandom(given: options.pageNumbers))
    }

    /// Starts watching the store and resumes unfinished albums: pins not yet requested (with
    /// pre-fetch), searches without an answer, photos still placeholders. Calling it again does
    /// nothing; nor does it on a read-only replica, whose albums change only through its original.
    public func start() async {
        guard !store.isReplica else { return }
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        // Subscribe before reading the state, so no event falls between the two.
        let stream = store.changes()
        let state = store.state
        await core.resume(from: state)
        let task = Task.detached { [core] in
            for await change in stream {
                for event in change.events where event.sequence > state.sequence {
                    await core.handle(event, in: change.state)
                }
                await core.markProcessed(change.state.sequence)
            }
        }
        consumer.withLock { $0 = task }
    }

    /// Cancels downloads and searches in flight and stops watching. What was cancelled resumes
    /// when a pipeline next starts on the store.
    public func stop() async {
        let task = consumer.withLock { $0 }
        task?.cancel()
        await core.stop()
        await task?.value
    }

    /// Returns once nothing is being searched or downloaded and every event appended so far
    /// has been reacted to.
    public func waitUntilIdle() async {
        await core.waitUntilIdle()
    }

    /// The work in flight now.
    public var activity: PipelineActivity {
        get async { await core.activity }
    }

    /// Problems that could not be recorded as events (the store refused to write, say).
    public var problems: [String] {
        get async { await core.problems }
    }

    /// Opens a pin's album: an album already requested is shown as it is, without downloading
    /// again; one never requested (pre-fetch off, or not yet done) is requested now, except on
    /// a read-only replica, which shows it as it is.
    @discardableResult
    public func open(_ pin: PinID) async throws -> Album {
        guard let album = store.state.pins[pin]?.album else {
            throw DomainError(.unknownPin, "there is no pin \(pin)")
        }
        if album.phase == .notRequested, !store.isReplica {
            do {
                try await store.requestAlbum(for: pin, perPage: UInt32(options.perPage), collection: album.collection)
            } catch let error as DomainError where error.code == .wrongAlbumState || error.code == .staleCollection {
                // Requested meanwhile (by pre-fetch) or moved on: show what is there.
            }
        }
        guard let now = store.state.pins[pin]?.album else { throw DomainError(.unknownPin, "there is no pin \(pin)") }
        return now
    }

    /// New Collection: empties the album and asks for a random other page of the results
    /// (PageChoice); the search then leaves out every photo removed from this pin and, where
    /// it can, those of the collection replaced (``PhotoHistory``). Refused while the album is
    /// being listed or downloaded, and with `no-other-photos` where the listing already holds
    /// all the service has for the place.
    @discardableResult
    public func newCollection(for pin: PinID) async throws -> [RecordedEvent] {
        let perPage = options.perPage
        let random = random
        let order = source.pageOrder
        return try await store.replaceCollection(of: pin, perPage: UInt32(perPage)) { album in
            guard album.hasOtherPhotos else {
                let count = album.listedPhotoCount
                throw DomainError(
                    .noOtherPhotos,
                    "no other photos here: the photo service has only the \(count == 1 ? "one" : String(count)) already shown for this place")
            }
            let pages: Int
            if let request = album.request, Int(request.perPage) == perPage {
                pages = Int(album.pages)
            } else {
                pages = Int((album.total + UInt64(perPage) - 1) / UInt64(perPage))
            }
            let current = Int(album.request?.page ?? 1)
            let page = random.generator.withLock {
                PageChoice.newCollectionPage(order: order, pages: pages, perPage: perPage, current: current, using: &$0)
            }
            return UInt32(page)
        }
    }

    /// Tries again what failed in the pin's album: the search, or the photos that could not
    /// be downloaded.
    ///
    /// - Throws: ``DomainError`` `.wrongAlbumState` when nothing failed.
    public func retry(_ pin: PinID) async throws {
        // Refused here: retrying failed photos starts their downloads before any action.
        try store.refuseChangesOnReplica()
        guard let album = store.state.pins[pin]?.album else { throw DomainError(.unknownPin, "there is no pin \(pin)") }
        switch album.phase {
        case .failed:
            try await store.requestAlbum(
                for: pin, page: album.request?.page ?? 1, perPage: album.request?.perPage ?? UInt32(options.perPage),
                collection: album.collection)
        case .listed:
            let failed = album.slots.filter {
                if case .failed = $0.state { return true }
                return false
            }
            guard !failed.isEmpty else {
                throw DomainError(.wrongAlbumState, "pin \(pin)'s album is \(album.status): no photo failed")
            }
            await core.startDownloads(pin, album: album, slots: failed, cause: album.listedAt, replacing: true)
        case .notRequested, .listing:
            throw DomainError(.wrongAlbumState, "pin \(pin)'s album is \(album.status): nothing failed to retry")
        }
    }
}
