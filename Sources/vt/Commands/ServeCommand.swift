import AlbumPipeline
import ArgumentParser
import Dispatch
import Foundation
import NATSClient
import Replication
import VirtualTourist
import WebApp

/// `vt serve`: the web app (map, albums, time travel) over the store, until interrupted.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the web app: the map, photo albums and time travel, in a browser.",
        discussion: """
            Listens on 127.0.0.1 (loopback) unless --host names another address, which needs an \
            access token (--token or VT_TOKEN). Photos come from --photos: by default Flickr when FLICKR_API_KEY is set, \
            else Wikimedia Commons when it answers at start, else the offline demo photo service. Map tiles come from OpenStreetMap unless \
            --tiles names another source or 'none' (a plain map with a graticule, no network). \
            Leaflet comes from Debian's libjs-leaflet (apt-get install libjs-leaflet). \
            --replicate ships the store's events and photos to a NATS JetStream cluster as they are \
            committed; --follow serves a read-only replica of a replicated store, live (a new folder is \
            restored from the stream first). docs/REPLICATION.md. --sync makes this device one of several \
            that all write to one map through the cluster, each taking the others' actions live \
            (docs/SYNC.md). Stop with Ctrl-C.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port (0: any free port).") var port = 8080
    @Option(help: ArgumentHelp("An access token (16+ characters) every request must carry; needed off loopback.", discussion: "Default: $VT_TOKEN."))
    var token: String?
    @Option(help: ArgumentHelp("The map's tile URL template with {z}, {x}, {y}, or 'none'.", discussion: "Default: $VT_TILES, else OpenStreetMap's."))
    var tiles: String?
    @Option(help: ArgumentHelp("The folder holding leaflet.js and leaflet.css.", discussion: "Default: $VT_LEAFLET, else /usr/share/javascript/leaflet."))
    var leaflet: String?
    @Option(help: "Photos per album for new requests (1 to 250).") var perPage = 21
    @Option(help: ArgumentHelp("Where photos come from: auto, flickr, commons or demo.", discussion: "Default: $VT_PHOTOS, else auto: Flickr when a key is set, else Wikimedia Commons when it answers at start, else the offline demo service."))
    var photos: PhotoChoice?
    @Option(help: ArgumentHelp("Replicate the store to this NATS cluster (nats://[user:password@]host:port, comma-separated).", valueName: "urls"))
    var replicate: String?
    @Option(help: ArgumentHelp("Serve a read-only replica of --stream from this NATS cluster, in the store folder.", valueName: "urls"))
    var follow: String?
    @Option(help: ArgumentHelp("Sync this device through this NATS cluster: ship its logs, take the map's other devices' live.", valueName: "urls"))
    var sync: String?
    @Option(help: "The replication stream (with --follow; with --replicate the default is VT_ and the log id).") var stream: String?
    @Option(help: "Copies the cluster keeps, with --replicate (default 3 on a cluster, 1 on a lone server).") var replicas: Int?

    var options: WebOptions {
        let environment = ProcessInfo.processInfo.environment
        var options = WebOptions()
        options.host = host
        options.port = port
        options.accessToken = token ?? environment["VT_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let tiles = tiles ?? environment["VT_TILES"].flatMap { $0.isEmpty ? nil : $0 }
        if let tiles { options.tileURL = tiles == "none" ? nil : tiles }
        if let folder = leaflet ?? environment["VT_LEAFLET"].flatMap({ $0.isEmpty ? nil : $0 }) { options.leafletFolder = folder }
        return options
    }

    func validate() throws {
        guard (1...250).contains(perPage) else { throw ValidationError("--per-page must be 1 to 250 (got \(perPage))") }
        if let problem = options.problem { throw ValidationError(problem) }
        if replicate != nil, follow != nil { throw ValidationError("--replicate and --follow exclude each other: a replica is not replicated again") }
        if sync != nil, replicate != nil || follow != nil {
            throw ValidationError("--sync ships this device's logs itself and takes the others': it goes without --replicate and --follow")
        }
        if sync != nil, stream != nil { throw ValidationError("--sync ships to each device's own stream, VT_ and its id: leave --stream out") }
        if follow != nil, stream == nil { throw ValidationError("--follow needs --stream NAME (vt replicate --status on the original names it)") }
        if stream != nil, replicate == nil, follow == nil { throw ValidationError("--stream goes with --replicate or --follow") }
        if let replicas {
            guard replicate != nil || sync != nil else { throw ValidationError("--replicas goes with --replicate or --sync") }
            guard (1...5).contains(replicas) else { throw ValidationError("--replicas must be 1 to 5") }
        }
    }

    func run() async throws {
        let options = options
        if let problem = options.leafletProblem { throw RuntimeError(message: problem) }
        // Signals become a stream here, before anything starts, so Ctrl-C always shuts down
        // in order: the server, the downloads, then the store (its snapshot and lock).
        let interrupted = Self.interruptions()
        if let follow {
            let (replication, replica) = try await ServeReplication.following(
                try ReplicationStream(name: stream!), from: follow, into: global.storePath, storeOptions: StoreOptions())
            do {
                // A replica fetches no photos of its own: they come from the original's bucket.
                try await serve(replica, photos: PhotoSourceSetup.replica, replication: replication, options: options, interrupted: interrupted)
            } catch {
                await replication.stop()
                try? await replica.close()
                throw error
            }
            await replication.stop()
            try await replica.close()
            return
        }
        // Connected before the store is opened: a cluster that cannot be reached changes nothing.
        var cluster: NATSConnection?
        if let replicate { cluster = try await Cluster.connect(replicate, live: true) }
        if let sync {
            // A bad URL or wrong credentials are errors that change nothing; a cluster that is
            // away leaves this device working alone until it answers (ServeSync.swift).
            do { cluster = try await NATSConnection.connect(sync, options: .live) } catch NATSError.unreachable(let urls, let last) {
                Terminal.note("the cluster cannot be reached now (\(urls.joined(separator: ", ")): \(last)); serving this device alone, syncing once it answers")
            } catch {
                throw RuntimeError(message: "cannot connect to the NATS cluster: \(error)")
            }
        }
        do {
            try await global.withStore(create: true) { store in
                let photos = try await PhotoSourceSetup.start(self.photos, environment: ProcessInfo.processInfo.environment)
                var replication: ServeReplication?
                do {
                    if let replicate, let connection = cluster {
                        cluster = nil  // closed by the replication from here on
                        replication = try await ServeReplication.replicating(
                            store: global.storePath, lastSequence: { store.lastSequence }, over: connection, to: replicate,
                            stream: stream, replicas: replicas)
                    } else if let sync {
                        let connection = cluster
                        cluster = nil
                        replication = ServeReplication.syncing(store: store, over: connection, to: sync, replicas: replicas)
                    }
                } catch {
                    await photos.stop()
                    throw error
                }
                try await serve(store, photos: photos, replication: replication, options: options, interrupted: interrupted)
            }
        } catch {
            await cluster?.close()
            throw error
        }
    }

    /// Serves `store` until interrupted, then shuts down in order: the server, the downloads,
    /// the replication, the photo service (the caller closes the store).
    private func serve(
        _ store: TouristStore, photos: PhotoSourceSetup, replication: ServeReplication?, options: WebOptions,
        interrupted: AsyncStream<Int32>
    ) async throws {
        var options = options
        options.replication = replication?.view
        options.deviceName = try? StoreSync.devices(of: store.folder).this.name
        var pipelineOptions = PipelineOptions()
        pipelineOptions.perPage = perPage
        let pipeline = try AlbumPipeline(store: store, source: photos.source, options: pipelineOptions)
        await pipeline.start()
        let server: WebServer
        do { server = try await WebServer.start(store: store, pipeline: pipeline, options: options) } catch {
            await pipeline.stop()
            await replication?.stop()
            await photos.stop()
            throw RuntimeError(message: "\(error)")
        }
        Terminal.note("store: \(global.storePath)" + (store.isReplica ? " (a read-only replica)" : ""))
        Terminal.note(photos.announcement)
        Terminal.note("map tiles: \(options.tileURL ?? "none (a plain map with a graticule)")")
        // The URL is the one line on standard output, written at once so that a program
        // that started this one can read it.
        FileHandle.standardOutput.write(Data("Virtual Tourist is at \(server.url)\n".utf8))
        Terminal.note("press Ctrl-C to stop")
        for await _ in interrupted { break }
        Terminal.note("stopping…")
        await server.stop()
        await pipeline.stop()
        await replication?.stop()
        await photos.stop()
    }

    /// SIGINT and SIGTERM, as a stream (their default action, ending the process at once, is
    /// turned off).
    static func interruptions() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let armed = DispatchGroup()
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            armed.enter()
            source.setRegistrationHandler { armed.leave() }
            source.resume()
            Self.sources.append(source)
        }
        // The source is armed a moment after resume(), on libdispatch's own queue, and a signal
        // that comes before that is ignored and lost: a `vt follow` told to stop just after it
        // said it was following went on for good. Callers take the stream before they say they
        // are running, and it is returned armed.
        _ = armed.wait(timeout: .now() + 10)
        return stream
    }

    nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
}
