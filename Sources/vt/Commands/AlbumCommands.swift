import AlbumPipeline
import DeviceLogs
import ArgumentParser
import Foundation
import VirtualTourist

/// `vt album PIN`, `vt album new-collection PIN`, `vt album retry PIN`.
struct AlbumCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "album", abstract: "Open a pin's photo album, downloading what it still needs.",
        subcommands: [Open.self, NewCollection.self, Retry.self], defaultSubcommand: Open.self)

    /// What the album commands share.
    struct AlbumOptions: ParsableArguments {
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The pin's id, or a unique prefix of it (at least 4 characters).") var pin: String
        @Flag(help: "Return at once instead of waiting for the downloads (they resume the next time an album is opened).")
        var noWait = false
        @Option(help: "Photos per album for a new request (1 to 250).") var perPage = 21
        @Option(help: ArgumentHelp("Where photos come from: auto, flickr, commons or demo.", discussion: "Default: $VT_PHOTOS, else auto: Flickr when a key is set, else Wikimedia Commons when it answers at start, else the offline demo service."))
        var photos: PhotoChoice?

        func validate() throws {
            guard (1...250).contains(perPage) else { throw ValidationError("--per-page must be 1 to 250 (got \(perPage))") }
        }
    }

    struct Open: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open",
            abstract: "Show a pin's album; request it if it never was, and wait while its photos download.",
            discussion: "Photos come from --photos: by default Flickr when FLICKR_API_KEY is set (or a key file exists), else Wikimedia Commons when it answers at start, else the offline demo photo service, started on loopback for the command.")
        @OptionGroup var options: AlbumOptions

        func run() async throws {
            try await options.global.withStore { store in
                let pin = try store.state.pin(matching: options.pin)
                // Another device's request is answered by that device alone: waiting here would
                // wait for a sync, not for a download.
                let elsewhere = pin.album.awaitsAnotherDevice(than: store.localDevice)
                if options.noWait {
                    if pin.album.phase == .notRequested {
                        try await store.requestAlbum(for: pin.id, perPage: UInt32(options.perPage), collection: pin.album.collection)
                    }
                } else if !pin.album.isNewCollectionEnabled && !elsewhere {
                    try await AlbumSession(store: store, pin: pin.id, options: options).run { try await $0.open(pin.id) }
                }
                try AlbumSession.show(store.state.pins[pin.id], localDevice: store.localDevice, json: options.global.json)
                if elsewhere, let asked = pin.album.requestedBy {
                    Terminal.note(
                        "this album was asked for on device \(DeviceArgument.label(asked, store: options.global.storePath)): its photos come when that device has them and a sync brings them here (vt sync --with); `vt album new-collection \(Describe.short(pin.id))` asks for photos on this device instead")
                }
            }
        }
    }

    struct NewCollection: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-collection",
            abstract: "Replace the album's photos with a random other page of the search results.",
            discussion: "Refused while the album is being listed or downloaded.")
        @OptionGroup var options: AlbumOptions

        func run() async throws {
            try await options.global.withStore { store in
                let pin = try store.state.pin(matching: options.pin)
                guard pin.album.allowsNewCollection(on: store.localDevice) else {
                    throw RuntimeError(message: "pin \(pin.id)'s album is \(Describe.status(pin.album)); New Collection is available once it is complete (vt album \(Describe.short(pin.id)))")
                }
                try await AlbumSession(store: store, pin: pin.id, options: options).run { _ = try await $0.newCollection(for: pin.id) }
                try AlbumSession.show(store.state.pins[pin.id], localDevice: store.localDevice, json: options.global.json)
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Try again what failed in an album: its search, or the photos that could not be downloaded.")
        @OptionGroup var options: AlbumOptions

        func run() async throws {
            try await options.global.withStore { store in
                let pin = try store.state.pin(matching: options.pin)
                try await AlbumSession(store: store, pin: pin.id, options: options).run { try await $0.retry(pin.id) }
                try AlbumSession.show(store.state.pins[pin.id], localDevice: store.localDevice, json: options.global.json)
            }
        }
    }
}

/// Runs the album pipeline for one command: starts the photo source, does the action, and
/// (unless `--no-wait`) follows the album until nothing is left to download.
struct AlbumSession {
    let store: TouristStore
    let pin: PinID
    let options: AlbumCommand.AlbumOptions

    func run(_ action: (AlbumPipeline) async throws -> Void) async throws {
        let photos = try await PhotoSourceSetup.start(options.photos, environment: ProcessInfo.processInfo.environment)
        Terminal.note(photos.announcement)
        var pipelineOptions = PipelineOptions()
        pipelineOptions.perPage = options.perPage
        pipelineOptions.prefetch = false  // this command is about one album, not every pin
        let pipeline = try AlbumPipeline(store: store, source: photos.source, options: pipelineOptions)
        await pipeline.start()
        do {
            try await action(pipeline)
            if !options.noWait { try await follow() }
        } catch {
            await pipeline.stop()
            await photos.stop()
            throw error
        }
        await pipeline.stop()
        await photos.stop()
    }

    /// Shows placeholders turning into photos (one redrawn line on a terminal) until the album
    /// settles: complete, No Images, or failed.
    private func follow() async throws {
        let bar = Terminal.errorIsTerminal && !options.global.json
        var shown = ""
        /// Redraws the strip when it changed; true once the album is settled.
        func settled(_ state: TouristState) -> Bool {
            guard let album = state.pins[pin]?.album else { return true }
            if bar {
                let line = "\(Describe.strip(album)) \(Describe.status(album))"
                if line != shown {
                    FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
                    shown = line
                }
            }
            return album.isNewCollectionEnabled
        }
        let changes = store.changes()
        if !settled(store.state) {
            for await change in changes where settled(change.state) { break }
        }
        if bar { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    static func show(_ pin: Pin?, localDevice: DeviceID? = nil, json: Bool) throws {
        guard let pin else { throw RuntimeError(message: "the pin was removed meanwhile") }
        if json { return try Output.json(PinJSON(pin, localDevice: localDevice)) }
        Output.lines(Describe.album(pin))
        let failed = pin.album.slots.count { if case .failed = $0.state { true } else { false } }
        if failed > 0 || { if case .failed = pin.album.phase { true } else { false } }() {
            print("some of it failed; try again with: vt album retry \(Describe.short(pin.id))")
        }
    }
}
