import Dispatch
import Foundation
import HTTPListening
import Hummingbird
@testable import PhotoAnswers
@testable import PhotoSources
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How a loopback server (``ListeningServer``: the web app, the demo photo service and the
/// Commons double) stops; `vt serve` stops its servers this way on Ctrl-C or SIGTERM.
@Suite struct ServerStopTests {
    /// A server whose `/slow` answers `done` 400 ms after it is asked, whatever happens
    /// meanwhile; `entered` counts the requests that reached it.
    private func slowServer(entered: Arrivals) async throws -> ListeningServer {
        let router = Router()
        router.get("/slow") { _, _ -> String in
            entered.count()
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(400)) { done.resume() }
            }
            return "done"
        }
        return try await ListeningServer.listen(router: router, host: "127.0.0.1", port: 0, serverName: "test", logLabel: "test")
    }

    @Test func aRequestInFlightWhenTheServerStopsGetsItsWholeAnswer() async throws {
        let entered = Arrivals()
        let server = try await slowServer(entered: entered)
        let url = server.origin(host: "127.0.0.1") + "/slow"
        let request = Task { try await HTTPFetch(timeout: .seconds(10), maxBytes: 1_000, what: "the slow page").get(url, shownURL: url) }
        let deadline = ContinuousClock.now + .seconds(10)
        while entered.seen == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        await server.stop()
        let answer = try await request.value
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == "done")
        // Stopped: nothing listens any more.
        await #expect(throws: PhotoSourceError.self) {
            try await HTTPFetch(timeout: .seconds(5), maxBytes: 1_000, what: "the slow page").get(url, shownURL: url)
        }
    }

    /// The stalled request is held until the stop has returned, so a stop that waited for it
    /// would never return (and the time limit would end the test), however slow the machine.
    @Test(.timeLimit(.minutes(2)))
    func aRequestThatOutlastsTheGracePeriodIsCutOffAndTheStopReturns() async throws {
        let entered = Arrivals()
        let (held, release) = AsyncStream<Void>.makeStream()
        let router = Router()
        router.get("/stalled") { _, _ -> String in
            entered.count()
            for await _ in held {}
            return "late"
        }
        let server = try await ListeningServer.listen(
            router: router, host: "127.0.0.1", port: 0, serverName: "test", logLabel: "test", gracePeriod: .milliseconds(300))
        let url = server.origin(host: "127.0.0.1") + "/stalled"
        let request = Task { try await HTTPFetch(timeout: .seconds(120), maxBytes: 1_000, what: "the stalled page").get(url, shownURL: url) }
        let deadline = ContinuousClock.now + .seconds(60)
        while entered.seen == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(entered.seen == 1)
        await server.stop()
        await #expect(throws: PhotoSourceError.self) { try await request.value }
        release.finish()
    }

    /// Connections accepted but not yet served when the server stops must be closed, not
    /// dropped: NIO traps on a connection's writer released unfinished (CI saw `vt serve` end
    /// on SIGILL this way), which would end this test process.
    @Test func connectionsNotYetServedWhenTheServerStopsAreClosed() async throws {
        for _ in 0..<20 {
            let server = try await slowServer(entered: Arrivals())
            let sockets = (0..<40).map { _ in connectedSocket(port: server.port) }
            await server.stop()
            #expect(sockets.allSatisfy { $0 >= 0 })
            // Each one was closed by the server: reading meets the end, not a wait.
            for socket in sockets where socket >= 0 {
                var byte: UInt8 = 0
                #expect(recv(socket, &byte, 1, 0) <= 0)
                close(socket)
            }
        }
    }

    /// A TCP connection to `port` on loopback, sending nothing (-1 if it failed).
    private func connectedSocket(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            close(fd)
            return -1
        }
        return fd
    }
}

/// How many requests reached a handler.
private final class Arrivals: Sendable {
    private let number = Mutex(0)
    func count() { number.withLock { $0 += 1 } }
    var seen: Int { number.withLock { $0 } }
}

/// A kept-alive connection the server dropped: the request is sent again, once, on a new one.
@Suite struct DroppedConnectionTests {
    @Test func aRequestResetOnAKeptAliveConnectionIsSentAgainOnANewOne() async throws {
        let listener = try StaleConnectionListener()
        defer { listener.stop() }
        let url = "http://127.0.0.1:\(listener.port)/page"
        let fetch = HTTPFetch(timeout: .seconds(60), maxBytes: 1_000, what: "the page")
        let first = try await fetch.get(url, shownURL: url)
        let second = try await fetch.get(url, shownURL: url)
        #expect(String(decoding: first.body, as: UTF8.self) == "1")
        #expect(String(decoding: second.body, as: UTF8.self) == "2", "answered on a second connection")
        let counts = listener.counts.value.withLock { $0 }
        #expect(counts.connections == 2 && counts.resets == 1)
    }
}
