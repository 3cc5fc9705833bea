import AlbumPipeline
import ArgumentParser
import Foundation
import VirtualTourist

/// `vt demo`: a short session on a fresh store, told as it happens — pins dropped, albums
/// filling photo by photo, a photo removed, a New Collection, a pin moved, a trip back in
/// time, and the garbage collection of images nobody uses any more.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A narrated Virtual Tourist session on a fresh store, with real photo downloads.",
        discussion: """
            Photos come from --photos: by default Flickr when FLICKR_API_KEY is set (or a key file \
            exists), else Wikimedia Commons when it answers at start, else the offline demo photo \
            service, which this command starts on loopback. The store \
            is a temporary folder, removed afterwards, unless --store names a new folder to keep.
            """
    )

    @Option(help: "Keep the store in this folder (it must not exist yet) instead of a temporary one.")
    var store: String?

    @Option(help: "Photos per album (1 to 250).")
    var perPage = 21

    @Option(help: ArgumentHelp("Where photos come from: auto, flickr, commons or demo.", discussion: "Default: $VT_PHOTOS, else auto: Flickr when a key is set, else Wikimedia Commons when it answers at start, else the offline demo service."))
    var photos: PhotoChoice?

    func validate() throws {
        guard (1...250).contains(perPage) else { throw ValidationError("--per-page must be 1 to 250 (got \(perPage))") }
        if let store, FileManager.default.fileExists(atPath: store) {
            throw ValidationError("--store \(store) already exists; name a new folder")
        }
    }

    func run() async throws {
        let temporary = store == nil
        let folder = store ?? NSTemporaryDirectory() + "vt-demo-\(UUID().uuidString.prefix(8))"
        defer { if temporary { try? FileManager.default.removeItem(atPath: folder) } }
        let photos = try await PhotoSourceSetup.start(self.photos, environment: ProcessInfo.processInfo.environment)
        print("Virtual Tourist demo — store: \(folder)\(temporary ? " (removed afterwards)" : "")")
        print(photos.announcement)
        do {
            try await DemoSession(folder: folder, photos: photos, perPage: perPage).run()
        } catch {
            await photos.stop()
            throw error
        }
        await photos.stop()
        print(temporary ? "done; the temporary store was removed" : "done; the store is kept in \(folder)")
    }
}

/// The session itself.
struct DemoSession {
    let folder: String
    let photos: PhotoSourceSetup
    let perPage: Int

    static let eiffelTower = Coordinate(latitude: 48.8584, longitude: 2.2945)
    static let pointNemo = Coordinate(latitude: -48.8767, longitude: -123.3933)
    static let kyoto = Coordinate(latitude: 35.0116, longitude: 135.7681)

    func run() async throws {
        var options = StoreOptions()
        // The demo collects what it replaced at once; a real store keeps a day of history.
        options.retention = .zero
        options.collectionInterval = nil
        let store = try await TouristStore.open(at: folder, options: options)
        var pipelineOptions = PipelineOptions()
        pipelineOptions.perPage = perPage
        let pipeline = try AlbumPipeline(store: store, source: photos.source, options: pipelineOptions)
        await pipeline.start()
        do {
            try await story(store, pipeline)
        } catch {
            await pipeline.stop()
            try? await store.close()
            throw error
        }
        await pipeline.stop()
        try await store.close()
    }

    private func story(_ store: TouristStore, _ pipeline: AlbumPipeline) async throws {
        print("\n1. A pin at the Eiffel Tower (\(Self.eiffelTower)); its album is fetched at once (pre-fetch).")
        let paris = try await store.dropPin(at: Self.eiffelTower)
        try await follow(paris, in: store)

        print("\n2. A pin at Point Nemo, the ocean's pole of inaccessibility (\(Self.pointNemo)).")
        let nemo = try await store.dropPin(at: Self.pointNemo)
        try await follow(nemo, in: store)

        let beforeRemoval = store.lastSequence
        if let first = store.state.pins[paris]?.album.slots.first {
            print("\n3. The first photo of the Paris album (“\(first.photo.title)”) is removed.")
            try await store.removePhoto(first.number, from: paris)
            print("   the album has \(store.state.pins[paris]!.album.slots.count) photos; the others moved up")
        } else {
            print("\n3. The Paris album has no photo to remove.")
        }

        print("\n4. New Collection for Paris: a random other page of the results.")
        let replaced = try await pipeline.newCollection(for: paris)
        if case .albumRequested(let request) = replaced.last?.event {
            print("   asked for page \(request.page) (the first album was page 1)")
        }
        try await follow(paris, in: store)

        print("\n5. The Point Nemo pin is dragged to Kyoto (\(Self.kyoto)); its album moves with it.")
        try await store.dragPin(nemo, to: Self.kyoto)
        try await follow(nemo, in: store)

        print("\n6. Time travel: the store as it was just before the photo was removed (event \(beforeRemoval)).")
        let then = try store.state(at: beforeRemoval)
        let now = store.state
        print("   then: Paris had \(then.pins[paris]!.album.slots.count) photos of collection \(then.pins[paris]!.album.collection);"
            + " Point Nemo's pin was at \(then.pins[nemo]!.coordinate)")
        print("   now:  Paris has \(now.pins[paris]!.album.slots.count) photos of collection \(now.pins[paris]!.album.collection);"
            + " the pin is at \(now.pins[nemo]!.coordinate)")

        print("\n7. Garbage collection: images no album uses any more are deleted.")
        let report = try store.collectGarbage(grace: .zero)
        print("   collected \(report.collected.count) images (\(report.reclaimedBytes) bytes); kept \(report.keptReferenced) in use")

        let events = try store.events()
        let types = Dictionary(grouping: events, by: \.event.typeName).mapValues(\.count)
        print("\nThe log holds \(events.count) events: "
            + DomainEvent.typeNames.compactMap { name in types[name].map { "\($0) \(name)" } }.joined(separator: ", "))
        let problems = await pipeline.problems
        if !problems.isEmpty { print("problems: " + problems.joined(separator: "; ")) }
    }

    /// Prints the pin's album as it fills, until New Collection is enabled again.
    private func follow(_ pin: PinID, in store: TouristStore) async throws {
        let changes = store.changes()
        var shown = ""
        var shownDone = 0
        /// Prints what changed (downloads by the quarter); true once the album is settled.
        func settled(_ state: TouristState) -> Bool {
            guard let album = state.pins[pin]?.album else { return true }
            let line = Self.describe(album)
            var worthShowing = line != shown
            if case .downloading(let done, let total) = album.status, done > 0 {
                let quarter = max(1, total / 4)
                worthShowing = worthShowing && (shownDone == 0 || done / quarter > shownDone / quarter)
                if worthShowing { shownDone = done }
            }
            if worthShowing {
                print("   " + line)
                shown = line
            }
            return album.isNewCollectionEnabled
        }
        var final = store.state
        if !settled(final) {
            for await change in changes {
                final = change.state
                if settled(final) { break }
            }
        }
        guard let album = final.pins[pin]?.album else { return }
        let failed = album.slots.count { if case .failed = $0.state { true } else { false } }
        if failed > 0 { print("   \(failed) photo(s) could not be downloaded; a retry would try them again") }
    }

    private static func describe(_ album: Album) -> String {
        switch album.status {
        case .notRequested: return "album not requested yet"
        case .listing: return "searching for photos…"
        case .downloading(let done, let total):
            return done == 0
                ? "\(total) placeholders (page \(album.request?.page ?? 1) of \(album.pages); \(album.total) photos found nearby)"
                : "\(done) of \(total) photos downloaded"
        case .complete: return "complete: \(album.slots.count) photos"
        case .noImages: return "No Images: nothing was photographed here"
        case .failed(let reason): return "the search failed: \(reason)"
        }
    }
}
