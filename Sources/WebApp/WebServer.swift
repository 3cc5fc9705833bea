import Foundation
import AlbumPipeline
import HTTPListening
import Hummingbird
import Places
import Synchronization
import VirtualTourist

/// The web app: a Hummingbird server over an open store and its album pipeline.
///
/// ```swift
/// let server = try await WebServer.start(store: store, pipeline: pipeline, options: WebOptions())
/// print(server.url)       // http://127.0.0.1:8080/  (with ?token=… when one is set)
/// await server.stop()     // ends live streams, stops listening
/// ```
///
/// Routes (docs/WEB.md): pages at /, /album and /time; JSON under /api; live updates at
/// /api/live; photos at /photos/DIGEST; Leaflet under /leaflet. Every request passes the
/// ``RequestGuard`` first.
public final class WebServer: Sendable {
    /// `http://HOST:PORT`.
    public let origin: String
    /// The address to open: the origin's map page, with the access token when one is set.
    public let url: String
    private let live: LiveUpdates
    private let server: ListeningServer

    public var port: Int { server.port }

    private init(origin: String, url: String, live: LiveUpdates, server: ListeningServer) {
        self.origin = origin
        self.url = url
        self.live = live
        self.server = server
    }

    /// Starts listening and returns once the port is bound.
    ///
    /// - Throws: ``WebServerError`` for options that cannot be used, missing Leaflet files, or
    ///   an address that cannot be bound (in use, say).
    public static func start(store: TouristStore, pipeline: AlbumPipeline, options: WebOptions) async throws -> WebServer {
        if let problem = options.problem { throw WebServerError(problem) }
        if let problem = options.leafletProblem { throw WebServerError(problem) }
        let pages = try PageRoutes(tileURL: options.tileURL, leafletFolder: options.leafletFolder)
        let live = LiveUpdates(store: store, heartbeat: options.heartbeat)
        let boundPort = Atomic<Int>(0)
        // HEAD is answered wherever GET is: the same head, no body.
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestGuard(
            token: options.accessToken, checksHost: options.accessToken == nil,
            port: { boundPort.load(ordering: .relaxed) }))
        let config = ConfigJSON(
            tiles: options.tileURL, event_types: DomainEvent.typeNames, max_photos: pipeline.options.perPage,
            read_only: store.isReplica, replication: options.replication != nil, device_name: options.deviceName)
        // Routes go in through the recorder, which keeps the methods each path answers.
        let routes = RouteRecorder(router)
        pages.add(to: routes)
        try LandRoute().add(to: routes)
        // Load the place names now, off the request path, so the first page that shows a pin
        // does not wait for them (under a tenth of a second in a release build).
        // A thread of its own: a load on Swift's small cooperative pool would stall it.
        Thread.detachNewThread { _ = try? ReverseGeocoder.bundled() }
        ReadRoutes(store: store, live: live, config: config, replication: options.replication).add(to: routes)
        WhyRoute(store: store).add(to: routes)
        ActionRoutes(store: store, pipeline: pipeline, bodyLimit: options.maxBodyBytes).add(to: routes)
        // Added last, it wraps only the router's answer for what no route takes: a path that
        // exists, asked with another method, gets 405 and Allow.
        router.add(middleware: AllowedMethods(routes: routes.table))

        let server: ListeningServer
        do {
            server = try await ListeningServer.listen(
                router: router, host: options.host, port: options.port, serverName: "VirtualTourist", logLabel: "virtual-tourist.web",
                limits: options.connectionLimits)
        } catch {
            live.stop()
            throw WebServerError(
                "cannot listen on \(options.host):\(options.port)" + (error.cause.map { " (\($0))" } ?? "")
                    + "; is another program using the port? Choose another with --port")
        }
        boundPort.store(server.port, ordering: .relaxed)
        let origin = server.origin(host: options.host)
        let url = origin + "/" + (options.accessToken.map { "?token=\($0)" } ?? "")
        return WebServer(origin: origin, url: url, live: live, server: server)
    }

    /// Pages with a live stream open now.
    public var liveStreams: Int { live.subscriberCount }

    /// Ends the live streams and stops listening (requests in flight finish).
    public func stop() async {
        live.stop()
        await server.stop()
    }
}

/// The web app could not start.
public struct WebServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
