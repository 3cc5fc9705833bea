import DemoPhotoServer
import PhotoSources

/// Where photos come from for this run: Flickr when a key is configured (`FLICKR_API_KEY` or
/// the key file), otherwise the offline demo service, started here on loopback. Either can be
/// pointed elsewhere with `VT_FLICKR_ENDPOINT`. The key is never printed.
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

    static func fromEnvironment(_ environment: [String: String]) async throws -> PhotoSourceSetup {
        let key: FlickrAPIKey?
        do { key = try FlickrAPIKey.configured(environment: environment) } catch {
            throw RuntimeError(message: "\(error.message) (unset it to use the offline demo photo service)")
        }
        let endpoint = environment[FlickrClient.endpointVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let key {
            let client = FlickrClient(key: key, endpoint: endpoint ?? FlickrClient.defaultEndpoint)
            let source = FlickrPhotoSource(client: client)
            return PhotoSourceSetup(
                source: source, announcement: "photos: \(source.name) (a Flickr API key is configured)", server: nil)
        }
        if let endpoint {
            let client = FlickrClient(key: try FlickrAPIKey(offlineKey), endpoint: endpoint)
            let source = FlickrPhotoSource(client: client)
            return PhotoSourceSetup(
                source: source, announcement: "photos: \(source.name) (from \(FlickrClient.endpointVariable); no key is set)",
                server: nil)
        }
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
        let source = FlickrPhotoSource(client: client, name: "the offline demo photo service at \(server.origin)")
        return PhotoSourceSetup(
            source: source,
            announcement: "photos: \(source.name) (no FLICKR_API_KEY is set; set one to use Flickr)", server: server)
    }

    func stop() async {
        await server?.stop()
    }
}
