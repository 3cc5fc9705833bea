import Hummingbird
import NIOCore
import Logging
import ServiceLifecycle
import Synchronization

/// A Hummingbird server that is listening: started by ``listen(router:host:port:serverName:logLabel:gracePeriod:)``,
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
    /// The application runs in a group of its own so that it can be shut down gracefully.
    /// Cancelling it instead drops connections accepted but not yet served, and NIO traps on
    /// each one's writer released unfinished (CI saw `vt serve` end on SIGILL at SIGTERM).
    private let group: ServiceGroup
    /// How long ``stop()`` lets requests in flight finish before it cancels them: a client
    /// that stalls must not hold a Ctrl-C up for long.
    public let gracePeriod: Duration

    /// Why the server could not listen; `cause` is what Hummingbird or NIO said, if anything.
    public struct Failure: Error, Sendable {
        public let cause: (any Error)?
    }

    /// - Parameter limits: how long a connection may idle and how many may be open
    ///   (``ConnectionLimits``).
    public static func listen(
        router: Router<BasicRequestContext>, host: String, port: Int, serverName: String, logLabel: String,
        gracePeriod: Duration = .seconds(5), limits: ConnectionLimits = ConnectionLimits()
    ) async throws(Failure) -> ListeningServer {
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let failure = Mutex<(any Error)?>(nil)
        limits.raiseDescriptorLimit()
        let count = ConnectionCount(limit: limits.maxConnections)
        let (seconds, attoseconds) = limits.idleTimeout.components
        let idle = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let app = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [count.handler()], idleTimeout: idle)),
            configuration: .init(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: logLabel) { _ in SwiftLogNoOpLogHandler() }
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: logLabel) { _ in SwiftLogNoOpLogHandler() }))
        let task = Task {
            do { try await group.run() } catch { failure.withLock { $0 = error } }
            portContinuation.finish()
        }
        for await bound in ports { return ListeningServer(port: bound, task: task, group: group, gracePeriod: gracePeriod) }
        throw Failure(cause: failure.withLock { $0 })
    }

    /// Stops listening, closes idle connections, and lets requests in flight finish, for at
    /// most ``gracePeriod``; what is still running then is cancelled.
    public func stop() async {
        await group.triggerGracefulShutdown()
        let running = task
        let deadline = Task {
            try? await Task.sleep(for: gracePeriod)
            if !Task.isCancelled { running.cancel() }
        }
        await running.value
        deadline.cancel()
    }

    /// `http://HOST:PORT`, with an IPv6 host in brackets.
    public func origin(host: String) -> String {
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(shown):\(port)"
    }
}
