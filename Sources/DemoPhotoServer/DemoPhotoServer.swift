import HTTPListening
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The offline photo service: a Flickr-compatible HTTP server on loopback. It answers
/// `flickr.photos.search` from a ``DemoCatalogue`` (deterministic photos for any place) in
/// Flickr's JSON, and serves each photo's image as a generated PNG.
///
/// ```swift
/// let server = try await DemoPhotoServer.start()
/// server.endpoint        // http://127.0.0.1:PORT/services/rest/ — give it to FlickrClient
/// server.controls.holdImages()                       // tests: hold downloads…
/// server.controls.failNextSearches(with: [.httpStatus(500)])
/// await server.stop()
/// ```
public final class DemoPhotoServer: Sendable {
    /// The REST endpoint, as `VT_FLICKR_ENDPOINT` would name it.
    public let endpoint: String
    /// `http://HOST:PORT`.
    public let origin: String
    public let port: Int
    /// Faults, the image gate and the request record.
    public let controls: DemoServerControls
    private let server: ListeningServer

    /// The path of the REST endpoint.
    public static let restPath = "/services/rest/"
    /// Image sizes served, by their Flickr suffix: `url_q` is 48 × 48, `url_m` 96 × 72.
    static let sizes: [String: (width: Int, height: Int)] = ["q": (48, 48), "m": (96, 72)]

    private init(origin: String, port: Int, controls: DemoServerControls, server: ListeningServer) {
        self.origin = origin
        self.endpoint = origin + Self.restPath
        self.port = port
        self.controls = controls
        self.server = server
    }

    /// Starts the server on `host` (loopback by default) and `port` (0: any free port), and
    /// returns once it listens.
    ///
    /// - Parameter requiredKey: when set, searches with another `api_key` fail as Flickr's do
    ///   (code 100); otherwise any non-empty key is accepted.
    /// - Throws: ``DemoServerError`` when the address cannot be bound.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, requiredKey: String? = nil, catalogue: DemoCatalogue = DemoCatalogue()
    ) async throws -> DemoPhotoServer {
        guard (0...65_535).contains(port) else { throw DemoServerError("port \(port) is outside 0…65535") }
        let controls = DemoServerControls()
        let origin = Mutex<String?>(nil)
        let handlers = DemoHandlers(catalogue: catalogue, controls: controls, requiredKey: requiredKey) {
            origin.withLock { $0 } ?? ""
        }
        let router = Router()
        router.get("/services/rest") { request, _ in await controls.answering { await handlers.search(request) } }
        router.get("/photos/:owner/:id") { _, context in
            handlers.photoPage(owner: context.parameters.get("owner") ?? "", id: context.parameters.get("id") ?? "")
        }
        router.get("/images/:name") { request, context in
            await controls.answering { await handlers.image(named: context.parameters.get("name") ?? "", request: request) }
        }
        let server: ListeningServer
        do {
            server = try await ListeningServer.listen(
                router: router, host: host, port: port, serverName: "VirtualTouristDemo", logLabel: "virtual-tourist.demo-photo-server")
        } catch {
            throw DemoServerError(
                "the offline photo service could not listen on \(host):\(port)"
                    + (error.cause.map { " (\($0))" } ?? "") + "; choose another port")
        }
        let base = server.origin(host: host)
        origin.withLock { $0 = base }
        return DemoPhotoServer(origin: base, port: server.port, controls: controls, server: server)
    }

    /// Stops listening and ends requests in flight (held ones are let go).
    public func stop() async {
        controls.stop()
        await server.stop()
    }
}

/// The demo server could not start.
public struct DemoServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
