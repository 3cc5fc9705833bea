import Foundation
import NATSClient
import NATSTestSupport
import Testing

/// A request that times out makes the client ask the server for a PONG at once
/// (``NATSOptions/probeTimeout``): a hung connection is remade within seconds, while a server
/// that is only slow to reply keeps its connection. The periodic pings are set to ten minutes,
/// so only the probe can act here.
@Suite("NATS liveness probe against a real nats-server")
struct LivenessProbeTests {
    static func options() -> NATSOptions {
        var options = testOptions()
        options.pingInterval = .seconds(600)
        options.probeTimeout = .milliseconds(500)
        return options
    }

    @Test func aRequestTimingOutOnAFrozenServerMovesTheConnectionToAnother() async throws {
        try await withNATSServers(count: 3) { servers in
            let nats = try await NATSConnection.connect(servers.url(1), options: Self.options())
            try await nats.flush()
            let pid = try #require(Int32(try String(contentsOfFile: servers.directory + "/n1/pid", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            // Frozen, its sockets stay open: nothing is refused, nothing is answered.
            kill(pid, SIGSTOP)
            defer { kill(pid, SIGCONT) }
            await #expect(throws: NATSError.self) { try await nats.request("nobody.listens", timeout: .milliseconds(300)) }
            #expect(
                await eventually { nats.probeCounts.failed == 1 && nats.isConnected && nats.connectedServer?.port != servers.port(1) },
                "the probe found the frozen server and the connection moved: \(nats.probeCounts), on \(String(describing: nats.connectedServer))")
            #expect(nats.reconnectCount == 1)
            let subscription = try nats.subscribe("echo")
            try await nats.flush()
            try nats.publish("echo", payload: [7])
            #expect(try await subscription.next(timeout: .seconds(10))?.payload == [7], "the new connection carries messages")
            await nats.close()
        }
    }

    @Test func aRequestTimingOutOnALiveServerKeepsTheConnection() async throws {
        try await withNATSServers { servers in
            let nats = try await NATSConnection.connect(servers.url(1), options: Self.options())
            // Someone listens and never replies (a JetStream electing a leader is as silent).
            let silent = try nats.subscribe("silent")
            try await nats.flush()
            await #expect(throws: NATSError.self) { try await nats.request("silent", timeout: .milliseconds(200)) }
            #expect(await eventually { nats.probeCounts.passed == 1 }, "the probe was judged: \(nats.probeCounts)")
            #expect(nats.probeCounts.failed == 0)
            #expect(nats.isConnected && nats.reconnectCount == 0, "the connection was kept")
            #expect(try await silent.next(timeout: .seconds(10)) != nil, "the request reached the listener")
            await nats.close()
        }
    }
}
