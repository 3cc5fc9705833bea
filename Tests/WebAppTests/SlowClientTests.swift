import Foundation
import HTTPListening
import Testing
import WebApp

/// Slow, idle and greedy clients get bounded time and room, and the others are served
/// meanwhile (docs/SECURITY.md, ConnectionLimits). The waits are for the server's close,
/// with a limit that only a hang reaches.
@Suite struct SlowClientTests {
    static func limits(idle: Duration, connections: Int = 4_096) -> (inout WebOptions) -> Void {
        { $0.connectionLimits = ConnectionLimits(idleTimeout: idle, maxConnections: connections) }
    }

    @Test func idleAndSlowClientsAreClosedWhileOthersAreServed() async throws {
        try await WebHarness.with(configure: Self.limits(idle: .seconds(1))) { web in
            let port = web.server.port
            let idle = try await RawConnection.open(port: port)[0]
            let slowHead = try await RawConnection.open(port: port, sending: "GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Slow: a")[0]
            let slowBody = try await RawConnection.open(
                port: port,
                sending: "POST /api/pins HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"lat")[0]
            let keptAlive = try await RawConnection.open(port: port, sending: "GET /api/config HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")[0]
            // A thousand more, each with half a request head.
            let crowd = try await RawConnection.open(count: 1_000, port: port, sending: "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: slow")
            // Meanwhile the others are served.
            for _ in 0..<20 { #expect(try await web.get("/api/state").status == 200) }

            for (what, connection) in [("idle", idle), ("slow head", slowHead), ("slow body", slowBody)] {
                let answer = await connection.readUntilClosed()
                #expect(answer != nil, "the \(what) connection is still open")
            }
            let kept = try #require(await keptAlive.readUntilClosed(), "the kept-alive connection is still open")
            #expect(String(decoding: kept, as: UTF8.self).hasPrefix("HTTP/1.1 200"), "it was answered before it idled")
            var open = 0
            for connection in crowd where await connection.readUntilClosed() == nil { open += 1 }
            #expect(open == 0, "\(open) of the 1,000 slow connections are still open")
            #expect(try await web.get("/api/state").status == 200)
        }
    }

    @Test func aRefusedBodyClosesItsConnectionWithoutReadingIt() async throws {
        // An idle timeout of an hour: only the refusal can close these.
        try await WebHarness.with(configure: Self.limits(idle: .seconds(3_600))) { web in
            let port = web.server.port
            let announced = try await RawConnection.open(
                port: port,
                sending: "POST /api/pins HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n")[0]
            let sent = try await RawConnection.open(
                port: port,
                sending: "POST /api/pins HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 20000\r\n\r\n")[0]
            await sent.sendOffPool([UInt8](repeating: UInt8(ascii: " "), count: 20_000))
            for connection in [announced, sent] {
                let answer = try #require(await connection.readUntilClosed(), "a refused body's connection is still open")
                let text = String(decoding: answer, as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 413") && text.lowercased().contains("connection: close"), "\(text.prefix(300))")
            }
            #expect(web.store.state.pinsInDropOrder.isEmpty)
        }
    }

    @Test func connectionsPastTheLimitAreClosedAtOnceAndRoomComesBack() async throws {
        try await WebHarness.with(configure: Self.limits(idle: .seconds(3_600), connections: 3)) { web in
            let port = web.server.port
            // Four at once: three are answered and kept alive, one is closed unanswered (which
            // one depends on the order the server's threads take them in).
            var connections = try await RawConnection.open(count: 4, port: port, sending: "GET /api/config HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            var answered = 0, refused = 0
            for connection in connections {
                let (head, closed) = await connection.readHead()
                if head.hasPrefix("HTTP/1.1 200") { answered += 1 } else if closed && head.isEmpty { refused += 1 }
            }
            #expect(answered == 3 && refused == 1, "\(answered) answered, \(refused) refused")
            let fifth = try await RawConnection.open(port: port, sending: "GET /api/config HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")[0]
            let (head, closed) = await fifth.readHead()
            #expect(closed && head.isEmpty, "while three are open, a new one is refused: \(head)")
            connections.removeAll()
            // Room comes back once the three are gone: a new client is answered. Each try
            // waits for the server's answer or its refusal; the three are counted out as their
            // closes arrive.
            var served = false
            for _ in 0..<1_000 where !served {
                let next = try await RawConnection.open(port: port, sending: "GET /api/config HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")[0]
                served = await next.readHead().head.hasPrefix("HTTP/1.1 200")
            }
            #expect(served)
        }
    }
}
