@testable import NATSClient
import NIOCore
import Testing

@Suite("NATS wire parser and URLs")
struct NATSWireParserTests {
    /// A server's side of a short session: every kind of operation, a message with a reply
    /// subject, one with headers and a status, an empty payload, and a payload holding CRLF.
    static let session = Array((
        "INFO {\"server_id\":\"x\",\"max_payload\":1048576,\"headers\":true}\r\n"
        + "+OK\r\nPING\r\nPONG\r\n"
        + "MSG photos.new 7 5\r\nhello\r\n"
        + "MSG photos.new 7 _INBOX.a.b 4\r\nab\r\n\r\n"
        + "HMSG _INBOX.x.1 2 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
        + "HMSG events 3 reply.to 36 39\r\nNATS/1.0\r\nNats-Msg-Id: e-1\r\nA: 1\r\n\r\nabc\r\n"
        + "msg lower 1 0\r\n\r\n"
        + "-ERR 'Authorization Violation'\r\n"
    ).utf8)

    static let expected: [NATSServerOperation] = {
        var headers = NATSHeaders()
        try! headers.append("Nats-Msg-Id", "e-1")
        try! headers.append("A", "1")
        return [
            .info(Array("{\"server_id\":\"x\",\"max_payload\":1048576,\"headers\":true}".utf8)),
            .ok, .ping, .pong,
            .message(NATSMessage(subject: "photos.new", sid: 7, payload: Array("hello".utf8))),
            .message(NATSMessage(subject: "photos.new", sid: 7, replyTo: "_INBOX.a.b", payload: Array("ab\r\n".utf8))),
            .message(NATSMessage(
                subject: "_INBOX.x.1", sid: 2, headers: NATSHeaders(status: 503, statusDescription: ""), payload: [])),
            .message(NATSMessage(subject: "events", sid: 3, replyTo: "reply.to", headers: headers, payload: Array("abc".utf8))),
            .message(NATSMessage(subject: "lower", sid: 1, payload: [])),
            .error("Authorization Violation"),
        ]
    }()

    @Test func parsesAWholeSession() throws {
        var parser = NATSWireParser()
        parser.append(Self.session)
        #expect(try parser.drain() == Self.expected)
        #expect(parser.bufferedBytes == 0)
    }

    /// However TCP cuts the stream, the same operations come out: the session split in two
    /// at every byte, and fed one byte at a time.
    @Test func sameOperationsWhereverTheBytesAreSplit() throws {
        for cut in 0...Self.session.count {
            var parser = NATSWireParser()
            parser.append(Self.session[..<cut])
            var operations = try parser.drain()
            parser.append(Self.session[cut...])
            operations += try parser.drain()
            #expect(operations == Self.expected, "split at \(cut)")
        }
        var parser = NATSWireParser()
        var operations: [NATSServerOperation] = []
        for byte in Self.session {
            parser.append([byte])
            operations += try parser.drain()
        }
        #expect(operations == Self.expected)
    }

    @Test func statusLinesAndHeaderFields() throws {
        let block = Array("NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nnats-pending-bytes: 10\r\n\r\n".utf8)
        let headers = try NATSHeaders.decode(block[...])
        #expect(headers.status == 408)
        #expect(headers.statusDescription == "Request Timeout")
        #expect(headers["Nats-Pending-Messages"] == "3")
        #expect(headers["NATS-PENDING-BYTES"] == "10")
        #expect(try NATSHeaders.decode(headers.encoded()[...]) == headers)
        #expect(throws: NATSError.self) { try NATSHeaders.decode(Array("HTTP/1.1 200\r\n\r\n".utf8)[...]) }
        for status in ["5x3", "+12", "006", "-50", "5030"] {
            #expect(throws: NATSError.self, "\(status)") { try NATSHeaders.decode(Array("NATS/1.0 \(status)\r\n\r\n".utf8)[...]) }
        }
        // A value that starts with a combining mark: a Character-wise trim saw " \u{65A}" as one
        // Character and kept the space the encoder writes after the colon (a FuzzNATS find).
        let combining = Array("NATS/1.0\r\nNats-Msg-Id:\u{65A}x 1\r\n\r\n".utf8)
        let marked = try NATSHeaders.decode(combining[...])
        #expect(marked["Nats-Msg-Id"] == "\u{65A}x 1")
        #expect(try NATSHeaders.decode(marked.encoded()[...]) == marked)
        var built = NATSHeaders()
        #expect(throws: NATSError.self) { try built.append("Bad Name", "x") }
        #expect(throws: NATSError.self) { try built.append("Name", "line\r\nbreak") }
    }

    @Test(arguments: [
        ("HELLO world\r\n", "unknown operation"),
        ("MSG a b 3\r\nabc\r\n", "subscription id"),
        ("MSG a 1 -3\r\n", "byte count"),
        ("MSG a 1 3\r\nabcd\r\n", "CRLF"),
        ("MSG a 1\r\n", "arguments"),
        ("HMSG a 1 10 5\r\n", "longer than the whole"),
        ("HMSG a 1 5 5\r\nHELLO\r\n", "NATS/1.0"),
        ("MSG a 1 2000\r\n", "over the limit"),
        ("INFO nothing\r\n", "JSON"),
    ])
    func badInputIsAnErrorAndTheParserStaysFailed(input: String, fragment: String) throws {
        var parser = NATSWireParser(maxControlLine: 4096, maxPayload: 1000)
        parser.append(Array(input.utf8))
        let error = #expect(throws: NATSError.self) { try parser.drain() }
        #expect("\(error!)".contains(fragment), "\(error!)")
        parser.append(Array("PING\r\n".utf8))
        #expect(throws: NATSError.self) { try parser.next() }
    }

    @Test func aControlLineOverTheLimitIsRefusedBeforeItsEndArrives() throws {
        var parser = NATSWireParser(maxControlLine: 64, maxPayload: 1000)
        parser.append(Array(("MSG " + String(repeating: "a", count: 70)).utf8))
        let error = #expect(throws: NATSError.self) { try parser.next() }
        #expect("\(error!)".contains("longer than 64"))
    }

    @Test func urlLists() throws {
        let urls = try NATSServerURL.parseList("nats://127.0.0.1:4300, tls://ann:p%40ss@example.org:4301,tok3n@[::1]:4302,localhost")
        #expect(urls == [
            NATSServerURL(host: "127.0.0.1", port: 4300),
            NATSServerURL(host: "example.org", port: 4301, tlsRequired: true, credentials: .userPassword(user: "ann", password: "p@ss")),
            NATSServerURL(host: "::1", port: 4302, credentials: .token("tok3n")),
            NATSServerURL(host: "localhost", port: 4222),
        ])
        #expect(urls[1].description == "tls://***@example.org:4301", "credentials never print")
    }

    @Test(arguments: [
        ("http://127.0.0.1:4222", "unknown scheme 'http'"),
        ("nats://127.0.0.1:0", "port '0'"),
        ("nats://127.0.0.1:65536", "port '65536'"),
        ("nats://127.0.0.1:42x", "port '42x'"),
        ("nats://:4222", "no host"),
        ("nats://127.0.0.1:4222/path", "no path"),
        ("nats://a:4222,,nats://b:4222", "empty entry"),
        ("", "no URL"),
        ("nats://ann:secret@[::1:4222", "IPv6"),
    ])
    func badURLsAreClearErrors(url: String, fragment: String) throws {
        let error = #expect(throws: NATSError.self) { try NATSServerURL.parseList(url) }
        let text = "\(error!)"
        #expect(text.contains(fragment), "\(text)")
        #expect(!text.contains("secret"), "a password reached the message: \(text)")
    }
}

@Suite("JetStream reply-subject metadata")
struct JetStreamMetadataTests {
    @Test func bothFormsOfTheAckSubjectAreRead() throws {
        let short = try JetStreamMessage(NATSMessage(
            subject: "events.s1", sid: 1, replyTo: "$JS.ACK.EVENTS.reader.2.17.5.1700000000000000000.40", payload: [1]))
        #expect(short.deliveries == 2 && short.streamSequence == 17 && short.consumerSequence == 5 && short.pending == 40)
        let long = try JetStreamMessage(NATSMessage(
            subject: "events.s1", sid: 1, replyTo: "$JS.ACK.hub.ACCHASH.EVENTS.reader.1.18.6.1700000000000000000.39.xyz",
            payload: [1]))
        #expect(long.deliveries == 1 && long.streamSequence == 18 && long.consumerSequence == 6 && long.pending == 39)
        for bad in [nil, "_INBOX.x", "$JS.ACK.EVENTS.reader.x.17.5.1.40", "$JS.ACK.a.b.c.d.e.f.g.h.i.j"] {
            #expect(throws: NATSError.self, "\(String(describing: bad))") {
                try JetStreamMessage(NATSMessage(subject: "s", sid: 1, replyTo: bad, payload: []))
            }
        }
    }
}
