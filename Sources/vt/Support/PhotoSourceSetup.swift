import ArgumentParser
import DemoPhotoServer
import PhotoSources

/// Which photo service `--photos` (or `VT_PHOTOS`) asks for.
enum PhotoChoice: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// Flickr when a key is set, else Commons when it answers at start, else the offline demo.
    case auto
    case flickr
    case commons
    case demo

    static let variable = "VT_PHOTOS"
}

/// Where photos come from for this run, as `--photos` chose: Flickr (a key, from
/// `FLICKR_API_KEY` or the key file), Wikimedia Commons (no key), or the offline demo service,
/// started here on loopback. `auto` takes Flickr when a key is configured, else Commons when it
/// answers a short probe at start, else the offline service, and says why on stderr. Flickr
/// can be pointed elsewhere with `VT_FLICKR_ENDPOINT`, Commons with `VT_COMMONS_ENDPOINT`. The
/// key is never printed.
struct PhotoSourceSetup {
    let source: any PhotoSource
    /// One line for people: which source, and why.
    let announcement: String
    /// The demo server this run started, if it did.
    let server: DemoPhotoServer?

    /// The key used with the offline demo service, which accepts any.
    static let offlineKey = "offline-demo"
    /// Milliseconds the offline service waits before sending each image.
    static let imageDelayVariable = "VT_DEMO_IMAGE_DELAY_MS"
    /// How long `auto` waits for Commons at start.
    static let probeLimit = Duration.seconds(3)

    /// - Parameter choice: the `--photos` option; nil reads `VT_PHOTOS`, else `auto`.
    static func start(_ choice: PhotoChoice?, environment: [String: String]) async throws -> PhotoSourceSetup {
        let choice = try choice ?? chosen(in: environment)
        let key: FlickrAPIKey?
        do { key = try FlickrAPIKey.configured(environment: environment) } catch {
            throw RuntimeError(message: "\(error.message) (unset it to use another photo service)")
        }
        let flickrEndpoint = nonEmpty(environment[FlickrClient.endpointVariable])
        switch choice {
        case .flickr:
            guard key != nil || flickrEndpoint != nil else {
                throw RuntimeError(
                    message: "--photos flickr needs a Flickr API key: set FLICKR_API_KEY (or choose --photos commons or demo)")
            }
            return try flickr(key: key, endpoint: flickrEndpoint)
        case .commons:
            let source = try commons(environment)
            return PhotoSourceSetup(source: source, announcement: "photos: \(source.name) (chosen with --photos commons)", server: nil)
        case .demo:
            return try await demo(environment, why: "chosen with --photos demo")
        case .auto:
            if key != nil || flickrEndpoint != nil { return try flickr(key: key, endpoint: flickrEndpoint) }
            let source = try commons(environment)
            if let problem = await source.client.probe(within: probeLimit) {
                Terminal.note("note: \(source.name) did not answer at start (\(problem.message)); using the offline demo photo service")
                return try await demo(environment, why: "no FLICKR_API_KEY is set and \(source.name) did not answer")
            }
            return PhotoSourceSetup(
                source: source, announcement: "photos: \(source.name) (no FLICKR_API_KEY is set; set one to use Flickr)", server: nil)
        }
    }

    /// `VT_PHOTOS`, or `auto` when it is unset.
    static func chosen(in environment: [String: String]) throws -> PhotoChoice {
        guard let text = nonEmpty(environment[PhotoChoice.variable]) else { return .auto }
        guard let choice = PhotoChoice(rawValue: text) else {
            let names = PhotoChoice.allCases.map(\.rawValue).joined(separator: ", ")
            throw RuntimeError(message: "\(PhotoChoice.variable) must be one of \(names) (got \(text.prefix(40)))")
        }
        return choice
    }

    static func flickr(key: FlickrAPIKey?, endpoint: String?) throws -> PhotoSourceSetup {
        if let key {
            let client = FlickrClient(key: key, endpoint: endpoint ?? FlickrClient.defaultEndpoint)
            let source = FlickrPhotoSource(client: client)
            return PhotoSourceSetup(source: source, announcement: "photos: \(source.name) (a Flickr API key is configured)", server: nil)
        }
        let client = FlickrClient(key: try FlickrAPIKey(offlineKey), endpoint: endpoint ?? FlickrClient.defaultEndpoint)
        let source = FlickrPhotoSource(client: client)
        return PhotoSourceSetup(
            source: source, announcement: "photos: \(source.name) (from \(FlickrClient.endpointVariable); no key is set)", server: nil)
    }

    static func commons(_ environment: [String: String]) throws -> CommonsPhotoSource {
        do {
            let client = try CommonsClient(
                endpoint: nonEmpty(environment[CommonsClient.endpointVariable]) ?? CommonsClient.defaultEndpoint,
                contact: nonEmpty(environment[CommonsClient.contactVariable]))
            return CommonsPhotoSource(client: client)
        } catch {
            throw RuntimeError(message: error.message)
        }
    }

    static func demo(_ environment: [String: String], why: String) async throws -> PhotoSourceSetup {
        let server: DemoPhotoServer
        do { server = try await DemoPhotoServer.start() } catch {
            throw RuntimeError(message: "the offline demo photo service could not start: \(error)")
        }
        if let text = environment[imageDelayVariable], !text.isEmpty {
            // Slows the offline service's images, to watch placeholders turn into photos.
            guard let milliseconds = Int(text), (0...10_000).contains(milliseconds) else {
                await server.stop()
                throw RuntimeError(message: "\(imageDelayVariable) must be a number of milliseconds from 0 to 10000 (got \(text))")
            }
            server.controls.failImages { _, _ in .delay(.milliseconds(milliseconds)) }
        }
        let client = FlickrClient(key: try FlickrAPIKey(offlineKey), endpoint: server.endpoint)
        // Its photos are found again after a restart, which gives it another port.
        let source = DemoPhotoSource(server: server, client: client, name: "the offline demo photo service at \(server.origin)")
        return PhotoSourceSetup(source: source, announcement: "photos: \(source.name) (\(why); its photos are generated)", server: server)
    }

    static func nonEmpty(_ text: String?) -> String? {
        text.flatMap { $0.isEmpty ? nil : $0 }
    }

    func stop() async {
        await server?.stop()
    }

    /// A read-only replica's: no photo service, since its photos come from the original's
    /// bucket with the events that name them, and it asks for nothing itself.
    static let replica = PhotoSourceSetup(
        source: NoPhotoSource(), announcement: "photos: from the original store's bucket in the cluster (a replica asks no photo service)",
        server: nil)
}

/// The photo source of a replica: the album pipeline never starts on one, and this refuses
/// anything asked all the same.
struct NoPhotoSource: PhotoSource {
    var name: String { "no photo service (a read-only replica)" }

    func search(latitude: Double, longitude: Double, page: Int, perPage: Int) async throws(PhotoSourceError) -> PhotoSearchPage {
        throw PhotoSourceError(.configuration, "a read-only replica asks no photo service")
    }

    func image(at url: String) async throws(PhotoSourceError) -> [UInt8] {
        throw PhotoSourceError(.configuration, "a read-only replica asks no photo service")
    }
}
