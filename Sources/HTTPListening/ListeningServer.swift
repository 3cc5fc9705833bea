import Hummingbird
import Logging
import Synchronization

/// A Hummingbird server that is listening: started by ``listen(router:host:port:serverName:logLabel:)``,
/// which returns only once the port is bound (so a caller can print the URL at once), or
/// throws when it cannot be. The demo photo service and the web app both start this way.
///
/// ```swift
/// let server = try await ListeningServer.listen(router: router, host: "127.0.0.1", port: 0, serverName: "X", logLabel: "x")
/// server.port             // the port chosen
/// await server.stop()     // graceful: requests in flight finish
/// ```
public struct ListeningServer: Sendable {
    public let port: Int
    private let task: Task<Void, Never>

    /// Why the server could not listen; `cause` is what Hummingbird or NIO said, if anything.
    public struct Failure: Error, Sendable {
        public let cause: (any Error)?
    }

    public static func listen(
        router: Router<BasicRequestContext>, host: String, port: Int, serverName: String, logLabel: String
    ) async throws(Failure) -> ListeningServer {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let failure = Mutex<(any Error)?>(nil)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: logLabel) { _ in SwiftLogNoOpLogHandler() }
        )
        let task = Task {
            do { try await app.run() } catch { failure.withLock { $0 = error } }
            portContinuation.finish()
        }
        for await bound in ports { return ListeningServer(port: bound, task: task) }
        throw Failure(cause: failure.withLock { $0 })
    }

    /// Stops listening; requests in flight finish first.
    public func stop() async {
        task.cancel()
        await task.value
    }

    /// `http://HOST:PORT`, with an IPv6 host in brackets.
    public func origin(host: String) -> String {
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(shown):\(port)"
    }
}
