import Foundation
import Synchronization
import Testing
import WebApp

/// GET /api/replication and what /api/config says of it. The replication itself, and a
/// replica's refusals over HTTP, are tested against a real cluster in
/// VTTests/ServeReplicationTests.
@Suite struct ReplicationRouteTests {
    @Test func aStoreNotReplicatedSaysSo() async throws {
        try await WebHarness.with { web in
            let config = try await web.get("/api/config").json()
            #expect(config["replication"] as? Bool == false)
            #expect(config["read_only"] as? Bool == false)
            let answer = try await web.get("/api/replication")
            #expect(answer.status == 404)
            #expect(answer.errorCode == "not-found")
            #expect(answer.text.contains("--replicate"), "\(answer.text)")
        }
    }

    @Test func theStatusIsReadAtEachRequest() async throws {
        let lag = Counter()
        try await WebHarness.with(configure: { options in
            options.replication = {
                ReplicationView(
                    role: .primary, stream: "VT_0123", servers: "nats://***@127.0.0.1:4333", events: 40, lagEvents: lag.next(),
                    pendingPhotos: 2, missingPhotos: 0, rewriting: true, lastError: "no answer within 5 s")
            }
        }) { web in
            #expect(try await web.get("/api/config").json()["replication"] as? Bool == true)
            let first = try await web.get("/api/replication").json()
            #expect(first["role"] as? String == "primary")
            #expect(first["stream"] as? String == "VT_0123")
            #expect(first["servers"] as? String == "nats://***@127.0.0.1:4333")
            #expect(first["events"] as? Int == 40)
            #expect(first["pending_photos"] as? Int == 2)
            #expect(first["last_error"] as? String == "no answer within 5 s")
            #expect(first["rewriting"] as? Bool == true)
            let second = try await web.get("/api/replication").json()
            #expect(first["lag_events"] as? Int == 1)
            #expect(second["lag_events"] as? Int == 2)
        }
    }
}

/// A lag that grows by one at each read, to see that the route asks every time.
private final class Counter: Sendable {
    private let value = Mutex(UInt64(0))
    func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
}
