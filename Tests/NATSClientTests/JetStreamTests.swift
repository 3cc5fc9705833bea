import Foundation
import NATSClient
import NATSTestSupport
import Testing

@Suite("JetStream and the Object Store against real nats-server processes")
struct JetStreamTests {
    /// Everything a replicated log needs from one stream, on a three-server cluster: three
    /// replicas, de-duplication by message id, the expected-last-sequence fence, reading by
    /// sequence and fetching in order from a sequence.
    @Test func aReplicatedStreamDeduplicatesFencesAndFetchesInOrder() async throws {
        try await withNATSServers(count: 3) { servers in
            let nats = try await NATSConnection.connect(servers.urls, options: testOptions())
            let js = JetStream(nats, timeout: .seconds(20))
            let config = StreamConfig(
                name: "EVENTS", subjects: ["events.>"], replicas: 3, denyDelete: true, denyPurge: true,
                duplicateWindow: .seconds(120))
            let created = try await js.createStream(config)
            #expect(created.config.replicas == 3)
            #expect(created.config.denyDelete && created.config.denyPurge)
            #expect(created.config.duplicateWindowNanoseconds == 120_000_000_000)
            #expect(created.state.messages == 0)
            let lookedUp = try await js.createOrLookUpStream(StreamConfig(name: "EVENTS", subjects: ["other"]))
            #expect(lookedUp.config.subjects == ["events.>"], "an existing stream is returned as it is")
            let missing = await #expect(throws: JetStreamAPIError.self) { try await js.streamInfo("NOPE") }
            #expect(missing?.errorCode == JetStreamAPIError.streamNotFound)

            var last: UInt64 = 0
            for index in 1...5 {
                let ack = try await js.publish(
                    "events.store1", payload: Array("event \(index)".utf8), messageID: "e-\(index)", expectedLastSequence: last)
                #expect(ack == PubAck(stream: "EVENTS", sequence: UInt64(index), duplicate: false))
                last = ack.sequence
            }
            let retry = try await js.publish("events.store1", payload: Array("event 5".utf8), messageID: "e-5")
            #expect(retry.duplicate && retry.sequence == 5, "a retry is acknowledged, not stored again")

            let fenced = await #expect(throws: JetStreamAPIError.self) {
                try await js.publish("events.store1", payload: [0], messageID: "intruder", expectedLastSequence: 3)
            }
            #expect(fenced?.isWrongLastSequence == true, "\(String(describing: fenced))")
            #expect(fenced?.errorCode == 10071)
            #expect(try await js.streamInfo("EVENTS").state.lastSequence == 5, "the fenced publish stored nothing")

            let third = try await js.message(stream: "EVENTS", sequence: 3)
            #expect(third.payload == Array("event 3".utf8) && third.subject == "events.store1")
            #expect(third.headers?["Nats-Msg-Id"] == "e-3")
            let none = await #expect(throws: JetStreamAPIError.self) { try await js.message(stream: "EVENTS", sequence: 99) }
            #expect(none?.errorCode == JetStreamAPIError.noMessageFound)

            let fetched = try await js.fetch(stream: "EVENTS", from: 2, batch: 4)
            #expect(fetched.map(\.streamSequence) == [2, 3, 4, 5])
            #expect(fetched.map { String(decoding: $0.payload, as: UTF8.self) } == (2...5).map { "event \($0)" })
            #expect(fetched.last?.pending == 0)
            let beyond = try await js.fetch(stream: "EVENTS", from: 6, batch: 10, expires: .milliseconds(500))
            #expect(beyond.isEmpty, "nothing past the end: the server's 408 ends the fetch")

            // A durable consumer keeps its place between fetches.
            let durable = try await js.pullConsumer(stream: "EVENTS", from: .sequence(1), durable: "reader", ackPolicy: .explicit)
            let first = try await durable.next(batch: 2)
            for message in first { try durable.ack(message) }
            let second = try await durable.next(batch: 10, expires: .milliseconds(800))
            #expect(first.map(\.streamSequence) == [1, 2])
            #expect(second.map(\.streamSequence) == [3, 4, 5])
            await #expect(throws: NATSError.noResponders(subject: "unstored.subject")) {
                try await js.publish("unstored.subject", payload: [1])
            }

            // A bucket with three replicas, as replication will make it.
            let photos = try await ObjectStore.createOrLookUp(js, bucket: "store1", replicas: 3)
            let photo = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try await photos.put("sha256-abc", data: photo)
            #expect(try await photos.get("sha256-abc") == photo)
            #expect(try await js.streamInfo("OBJ_store1").config.replicas == 3)
            await nats.close()
        }
    }

    /// A ~1 MB photo through the Object Store: chunked, read back whole and checked; the stream
    /// has JetStream's documented layout; a description with the wrong digest is caught.
    @Test func objectStoreRoundTripAndDigestCheck() async throws {
        try await withNATSServers { servers in
            let nats = try await NATSConnection.connect(servers.url(1), options: testOptions())
            let js = JetStream(nats, timeout: .seconds(20))
            let store = try await ObjectStore.createOrLookUp(js, bucket: "photos")
            var generator = SystemRandomNumberGenerator()
            let photo = (0..<(1 << 20) + 12345).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let info = try await store.put("album/photo 1.jpg", data: photo)
            #expect(info.size == UInt64(photo.count))
            #expect(info.chunks == 9, "1 MiB + 12345 bytes in chunks of 128 KiB")
            #expect(info.digest.hasPrefix("SHA-256=") && info.digest.count == 8 + 44)
            #expect(try await store.get("album/photo 1.jpg") == photo)
            #expect(try await store.exists("album/photo 1.jpg"))
            #expect(try await store.info("missing") == nil)
            await #expect(throws: ObjectStoreError.notFound(bucket: "photos", name: "missing")) { try await store.get("missing") }

            let stream = try await js.streamInfo("OBJ_photos")
            #expect(stream.config.subjects == ["$O.photos.C.>", "$O.photos.M.>"])
            #expect(stream.config.allowRollup == true)
            let meta = try await js.lastMessage(stream: "OBJ_photos", subject: "$O.photos.M.YWxidW0vcGhvdG8gMS5qcGc=")
            #expect(meta.headers?["Nats-Rollup"] == "sub")

            // Replacing the object purges the old chunks.
            let small = Array("small".utf8)
            try await store.put("album/photo 1.jpg", data: small)
            #expect(try await store.get("album/photo 1.jpg") == small)
            #expect(try await js.streamInfo("OBJ_photos").state.messages == 2, "one chunk and one description left")

            // A description whose digest does not match the chunks.
            var forged = try #require(try await store.info("album/photo 1.jpg"))
            forged.digest = "SHA-256=" + String(repeating: "A", count: 43) + "="
            var headers = NATSHeaders()
            try headers.append("Nats-Rollup", "sub")
            _ = try await js.publish(
                "$O.photos.M.YWxidW0vcGhvdG8gMS5qcGc=", payload: Array(try JSONEncoder().encode(forged)), headers: headers)
            let error = await #expect(throws: ObjectStoreError.self) { try await store.get("album/photo 1.jpg") }
            guard case .digestMismatch = error else { Issue.record("\(String(describing: error))"); return }

            // Sizes no photo has, up to past Int.max: refused as a mismatch, never a trap or a
            // reservation of that much memory.
            for size in [UInt64(1) << 40, UInt64(Int.max) + 1, .max] {
                forged.size = size
                _ = try await js.publish(
                    "$O.photos.M.YWxidW0vcGhvdG8gMS5qcGc=", payload: Array(try JSONEncoder().encode(forged)), headers: headers)
                let wrongSize = await #expect(throws: ObjectStoreError.self) { try await store.get("album/photo 1.jpg") }
                guard case .sizeMismatch(_, size, _, 5, 1) = wrongSize else { Issue.record("\(String(describing: wrongSize))"); return }
            }
            await nats.close()
        }
    }

    /// Deleting an object leaves a description marked deleted (as other NATS tools expect) and
    /// none of its chunks; a consumer that went with its stream is seen to be gone.
    @Test func objectDeleteAndAConsumerThatWentWithItsStream() async throws {
        try await withNATSServers { servers in
            let nats = try await NATSConnection.connect(servers.url(1), options: testOptions())
            let js = JetStream(nats, timeout: .seconds(20))
            let store = try await ObjectStore.createOrLookUp(js, bucket: "gone")
            var photo = store
            photo.chunkSize = 1000
            try await photo.put("a", data: Array(repeating: 7, count: 2500))
            try await photo.put("b", data: [1, 2, 3])
            #expect(try await js.streamInfo("OBJ_gone").state.messages == 6, "three chunks and a description, one chunk and one")
            try await photo.put("b", data: [1, 2, 3])  // a newer description of b: still one name
            #expect(try await store.names().sorted() == ["a", "b"])
            #expect(try await store.delete("a"))
            #expect(try await store.names() == ["b"], "a deleted object is not listed")
            #expect(try await store.delete("a") == false, "nothing left to delete")
            #expect(try await store.delete("never") == false)
            #expect(try await store.info("a") == nil)
            #expect(try await store.get("b") == [1, 2, 3], "the other object stays")
            #expect(try await js.streamInfo("OBJ_gone").state.messages == 3, "a's deleted description, b's chunk and description")
            #expect(try await ObjectStore.createOrLookUp(js, bucket: "empty").names().isEmpty)
            let meta = try await js.lastMessage(stream: "OBJ_gone", subject: "$O.gone.M.YQ==")
            let described = try JSONDecoder().decode(ObjectInfo.self, from: Data(meta.payload))
            #expect(described.deleted == true && described.size == 0 && described.chunks == 0)

            _ = try await js.createStream(StreamConfig(name: "SHORT", subjects: ["short.>"]))
            let consumer = try await js.pullConsumer(stream: "SHORT")
            #expect(try await consumer.exists())
            try await js.deleteStream("SHORT")
            #expect(try await consumer.exists() == false)
            await nats.close()
        }
    }

    /// What a follower relies on when it makes a consumer while a rewrite writes the stream back:
    /// the server starts a consumer asked to start past the stream's end at the end instead
    /// (at 1 when the stream is empty), so it hands over messages before the one asked for.
    @Test func aConsumerAskedToStartPastTheEndStartsAtTheEnd() async throws {
        try await withNATSServers { servers in
            let nats = try await NATSConnection.connect(servers.url(1), options: testOptions())
            let js = JetStream(nats, timeout: .seconds(20))
            _ = try await js.createStream(StreamConfig(name: "REFILLED", subjects: ["refilled.>"]))
            // Ephemeral consumers go after their inactivity threshold without a fetch (30 s by
            // default): on a loaded CI machine the publishes between making `early` and reading
            // it once took longer, and the server then let the fetch go unanswered. This test is
            // about where a consumer starts, so its consumers stay for as long as it may run.
            // Acknowledged explicitly: a fetch that gives up on a starved machine (its wait ran
            // out while its messages were on their way, which failed a CI run) leaves them
            // unacknowledged, and the server hands them over again instead of losing them.
            func consumer() async throws -> PullConsumer {
                try await js.pullConsumer(
                    stream: "REFILLED", from: .sequence(4), ackPolicy: .explicit,
                    inactiveThreshold: .seconds(3600), ackWait: .seconds(2))
            }
            let early = try await consumer()
            // Where each starts is the server's answer at once, before any message moves.
            #expect(try await early.position() == .init(lastDelivered: 0, pending: 0), "an empty stream: it starts at 1")
            for number in 1...2 { _ = try await js.publish("refilled.events", payload: [UInt8(number)]) }
            let later = try await consumer()
            #expect(try await later.position() == .init(lastDelivered: 2, pending: 0), "two messages: it starts at 3")
            for number in 3...5 { _ = try await js.publish("refilled.events", payload: [UInt8(number)]) }
            // And the messages it hands over say the same, fetched until as many came, each
            // counted once (one handed over again after a lost fetch is the same message, and
            // may come after those behind it).
            func fetch(_ consumer: PullConsumer, _ count: Int) async throws -> [UInt64] {
                var got: Set<UInt64> = []
                for _ in 0..<30 where got.count < count {
                    for message in try await consumer.next(batch: count, expires: .seconds(2)) {
                        try consumer.ack(message)
                        got.insert(message.streamSequence)
                    }
                }
                return got.sorted()
            }
            #expect(try await fetch(early, 5) == [1, 2, 3, 4, 5])
            #expect(try await fetch(later, 3) == [3, 4, 5])
            // Nothing more: both handed over the stream's last and have nothing left.
            #expect(try await early.position() == .init(lastDelivered: 5, pending: 0))
            #expect(try await later.position() == .init(lastDelivered: 5, pending: 0))
            await nats.close()
        }
    }
}
