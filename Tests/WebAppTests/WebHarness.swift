import AlbumPipeline
import AsyncHTTPClient
import DemoPhotoServer
import Foundation
import NIOCore
import NIOHTTP1
import PhotoSources
import SeededRandom
import StorageTestSupport
import Testing
import VirtualTourist
import WebApp

/// The web app over HTTP on loopback: a store in a temporary folder, the demo photo service,
/// the album pipeline, the server, and a client to talk to it. Leaflet's two files are stand-ins
/// in a temporary folder, so these tests need no system package.
final class WebHarness: Sendable {
    let folder: String
    let store: TouristStore
    let photos: DemoPhotoServer
    let pipeline: AlbumPipeline
    let server: WebServer
    let client: HTTPClient

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func json() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], "not a JSON object: \(text)")
        }
        var errorCode: String? { ((try? json())?["error"] as? [String: Any])?["code"] as? String }
    }

    static func with(configure: (inout WebOptions) -> Void = { _ in }, _ body: (WebHarness) async throws -> Void) async throws {
        let folder = TemporaryFolder.uniquePath("web")
        try FileManager.default.createDirectory(atPath: folder + "/leaflet", withIntermediateDirectories: true)
        try Data("/* leaflet stand-in */".utf8).write(to: URL(fileURLWithPath: folder + "/leaflet/leaflet.js"))
        try Data("/* leaflet stand-in */".utf8).write(to: URL(fileURLWithPath: folder + "/leaflet/leaflet.css"))
        var storeOptions = StoreOptions()
        storeOptions.log.durability = .none
        storeOptions.collectionInterval = nil
        let store = try await TouristStore.open(at: folder + "/store", options: storeOptions)
        let photos = try await DemoPhotoServer.start()
        let client = FlickrClient(key: try FlickrAPIKey("demo-key"), endpoint: photos.endpoint)
        var pipelineOptions = PipelineOptions()
        pipelineOptions.pageNumbers = SplitMix(seed: 3)
        pipelineOptions.perPage = 12
        let pipeline = try AlbumPipeline(store: store, source: FlickrPhotoSource(client: client), options: pipelineOptions)
        await pipeline.start()
        var options = WebOptions()
        options.port = 0
        options.tileURL = nil
        options.leafletFolder = folder + "/leaflet"
        options.heartbeat = .milliseconds(200)
        configure(&options)
        let server = try await WebServer.start(store: store, pipeline: pipeline, options: options)
        let harness = WebHarness(
            folder: folder, store: store, photos: photos, pipeline: pipeline, server: server,
            client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow)))
        do { try await body(harness) } catch {
            await harness.finish()
            throw error
        }
        await harness.finish()
    }

    private init(folder: String, store: TouristStore, photos: DemoPhotoServer, pipeline: AlbumPipeline, server: WebServer, client: HTTPClient) {
        self.folder = folder
        self.store = store
        self.photos = photos
        self.pipeline = pipeline
        self.server = server
        self.client = client
    }

    func finish() async {
        await server.stop()
        await pipeline.stop()
        try? await store.close()
        await photos.stop()
        try? await client.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// One request; `json` is sent as the body with `Content-Type: application/json`.
    func send(_ method: HTTPMethod, _ path: String, json: String? = nil, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: server.origin + path)
        request.method = method
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 8 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(body.readableBytesView))
    }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> Answer { try await send(.GET, path, headers: headers) }

    /// Waits until the store's state satisfies `condition` (at most 60 s: a bound on giving up, generous for a loaded machine).
    @discardableResult
    func eventually(_ what: String, _ condition: @escaping @Sendable (TouristState) -> Bool) async throws -> TouristState {
        let store = store
        return try await withThrowingTaskGroup(of: TouristState?.self) { group in
            group.addTask { try await store.waitForState(where: condition) }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            let state = try await group.next()!
            let albums = store.state.pinsInDropOrder.map { "\($0.id): \($0.album.status), collection \($0.album.collection)" }
            return try #require(state, "timed out waiting for \(what); albums: \(albums)")
        }
    }
}
