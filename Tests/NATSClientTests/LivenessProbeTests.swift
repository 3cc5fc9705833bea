import Foundation
import NATSClient
import NATSTestSupport
import Testing

/// A request that times out makes the client ask the server for a PONG at once
/// (``NATSOptions/probeTimeout``): a hung connection is remade within seconds, while a server
/// that is only slow to reply keeps its connection, unless its requests have gone unanswered for
/// ``NATSOptions/requestSilenceLimit``. The periodic pings are set to ten minutes, so only the
/// probe can act here.
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

    @Test func requestsUnansweredByAServerThatAnswersPingsMoveTheConnectionToAnother() async throws {
        let deaf = try await DeafNATSServer()
        try await withNATSServers { servers in
            let (responder, answering) = try await Self.answer("help", on: servers.url(1))
            var options = Self.options()
            // Every probe must pass, on a loaded machine too: the move is the silence's, not a
            // dead probe's. The first probe judged comes after the limit.
            options.probeTimeout = .seconds(3)
            options.requestSilenceLimit = .seconds(1)
            let nats = try await NATSConnection.connect("\(deaf.url),\(servers.url(1))", options: options)
            #expect(nats.connectedServer?.port == deaf.port)
            var timeouts = 0
            let answered = await eventually {
                do {
                    return try await nats.request("help", payload: [5], timeout: .milliseconds(300)).payload == [5]
                } catch {
                    timeouts += 1
                    return false
                }
            }
            #expect(answered, "a request was answered at last, after \(timeouts) timeouts")
            #expect(nats.connectedServer?.port == servers.port(1), "on \(String(describing: nats.connectedServer))")
            // On a machine stalled for longer than a probe's timeout the deaf server's PONG can
            // come too late and the probe move the connection first; a quiet run moves for the
            // silence (and without the silence rule, never: the requests stay unanswered).
            #expect(nats.silenceMoveCount == 1 || nats.probeCounts.failed > 0, "moved for the silence: \(nats.silenceMoveCount) moves, probes \(nats.probeCounts)")
            #expect(timeouts >= 2, "it stayed while the silence was shorter than the limit")
            answering.cancel()
            await nats.close()
            await responder.close()
        }
        await deaf.stop()
    }

    @Test func requestsTimingOutBetweenAnsweredOnesKeepTheConnection() async throws {
        // Three real servers, so that the silence rule has another server to move to (with one,
        // a broken rule could not show); a probe that a stalled machine judges dead also moves
        // the connection to one that answers, which is not a silence move and is not counted.
        try await withNATSServers(count: 3) { servers in
            let (responder, answering) = try await Self.answer("help", on: servers.url(1))
            let silent = try responder.subscribe("silent")
            try await responder.flush()
            var options = Self.options()
            // Each silence lasts a request's timeout and a probe's, 2.3 s, well within the limit
            // on a loaded machine; four of them in a row, were they not broken by the answers,
            // would pass it.
            options.probeTimeout = .seconds(2)
            options.requestSilenceLimit = .seconds(5)
            let nats = try await NATSConnection.connect(servers.url(1), options: options)
            for round in 1...4 {
                await #expect(throws: NATSError.self) { try await nats.request("silent", timeout: .milliseconds(300)) }
                #expect(await eventually { nats.probeCounts.passed + nats.probeCounts.failed == round }, "probe \(round) was judged: \(nats.probeCounts)")
                #expect(try await nats.request("help", payload: [UInt8(round)]).payload == [UInt8(round)])
            }
            #expect(nats.silenceMoveCount == 0, "no move for a silence that answers broke: \(nats.probeCounts)")
            #expect(try await silent.next(timeout: .seconds(10)) != nil, "the silent requests reached their listener")
            answering.cancel()
            await nats.close()
            await responder.close()
        }
    }

    /// A connection to `url` that replies to every request on `subject` with its payload.
    static func answer(_ subject: String, on url: String) async throws -> (NATSConnection, Task<Void, Error>) {
        let responder = try await NATSConnection.connect(url, options: testOptions())
        let requests = try responder.subscribe(subject)
        try await responder.flush()
        let answering = Task {
            for try await request in requests {
                if let reply = request.replyTo { try responder.publish(reply, payload: request.payload) }
            }
        }
        return (responder, answering)
    }
}
