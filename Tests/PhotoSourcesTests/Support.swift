import DemoPhotoServer
import Foundation
@testable import PhotoAnswers
@testable import PhotoSources

/// Places of the demo catalogue with no photos, a few, and more than 4,000.
enum DemoPlaces {
    static func find(_ wanted: (Int) -> Bool) -> (latitude: Double, longitude: Double) {
        DemoCatalogue().place(where: wanted)!
    }

    static let empty = find { $0 == 0 }
    static let few = find { (5...24).contains($0) }
    static let many = find { (600...3_000).contains($0) }
    static let beyondServed = find { $0 > 4_500 }
}

/// A client of a running demo server.
func demoClient(_ server: DemoPhotoServer, key: String = "demo-key", timeout: Duration = .seconds(60)) throws -> FlickrClient {
    FlickrClient(key: try FlickrAPIKey(key), endpoint: server.endpoint, timeout: timeout)
}

/// Runs `body` with a demo server, stopping it afterwards.
func withDemoServer<T>(
    requiredKey: String? = nil, _ body: (DemoPhotoServer) async throws -> T
) async throws -> T {
    let server = try await DemoPhotoServer.start(requiredKey: requiredKey)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

extension Result where Failure == PhotoSourceError {
    /// The outcome of an async call that throws a photo-source error.
    init(catching body: () async throws(PhotoSourceError) -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// A timeout that a delayed answer outlasts; otherwise a bound on a hang only, so that a busy
/// machine (all the tests run at once on two cores) never turns a slow normal answer into a
/// failure: 10 s was once not enough.
func timeout(for fault: DemoFault) -> Duration {
    if case .delay = fault { return .milliseconds(1500) }
    return .seconds(60)
}

extension ImageDownloader {
    /// The text of a web page, for tests that follow a credit's link.
    static func pageText(_ url: String) async throws -> String {
        let answer = try await HTTPFetch(timeout: .seconds(60), maxBytes: 1 << 20, what: "a page").get(url, shownURL: url)
        return String(decoding: answer.body, as: UTF8.self)
    }
}
