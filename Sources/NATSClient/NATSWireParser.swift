import NIOCore

/// A message delivered to a subscription (MSG or HMSG).
public struct NATSMessage: Equatable, Sendable {
    public var subject: String
    public var sid: UInt64
    public var replyTo: String?
    public var headers: NATSHeaders?
    public var payload: [UInt8]

    public init(subject: String, sid: UInt64, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8]) {
        self.subject = subject
        self.sid = sid
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The status of a status message (503, 404, 408, 409, 100), nil for ordinary messages.
    public var status: Int? { headers?.status }
}

/// What a server sends a client.
public enum NATSServerOperation: Equatable, Sendable {
    /// The INFO JSON, undecoded: the connection decodes it, so the parser stays free of
    /// Foundation and a bad INFO is reported where the connection can name the server.
    case info([UInt8])
    case message(NATSMessage)
    case ok
    case error(String)
    case ping
    case pong
}

/// The incremental reader of the server's side of the protocol. Bytes go in as they arrive, in
/// pieces of any size; whole operations come out. It is independent of any channel, so the
/// fuzzer and the tests drive it directly.
///
/// Limits keep a broken or hostile server from making the client buffer without end: a control
/// line longer than ``maxControlLine`` and a payload larger than ``maxPayload`` are errors. After
/// an error the parser stays failed: the byte stream has lost its framing and the connection
/// must be dropped.
public struct NATSWireParser: Sendable {
    /// The longest control line accepted, CRLF included (the server's own default is 4096).
    public var maxControlLine: Int
    /// The largest payload (headers included) accepted; the connection sets it from INFO's
    /// `max_payload`, with room for the status headers the server adds.
    public var maxPayload: Int

    private var buffer: ByteBuffer
    /// The MSG/HMSG whose control line was read and whose payload has not fully arrived.
    private var pending: PendingMessage?
    private var failure: NATSError?

    private struct PendingMessage: Sendable {
        var subject: String
        var sid: UInt64
        var replyTo: String?
        var headerLength: Int?
        var totalLength: Int
    }

    public init(maxControlLine: Int = 4096, maxPayload: Int = 64 << 20) {
        self.maxControlLine = maxControlLine
        self.maxPayload = maxPayload
        self.buffer = ByteBuffer()
    }

    /// Bytes held that do not yet form a whole operation.
    public var bufferedBytes: Int { buffer.readableBytes }

    public mutating func append(_ bytes: ByteBuffer) {
        var bytes = bytes
        buffer.writeBuffer(&bytes)
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.writeBytes(bytes)
    }

    /// The next whole operation, nil when more bytes are needed.
    public mutating func next() throws(NATSError) -> NATSServerOperation? {
        if let failure { throw failure }
        do {
            let operation = try parseNext()
            if buffer.readerIndex > 64 << 10 { buffer.discardReadBytes() }
            return operation
        } catch {
            failure = error
            throw error
        }
    }

    /// Every whole operation available now. On an error the operations before it are not
    /// returned; a reader that must act on them calls ``next()`` in a loop instead.
    public mutating func drain() throws(NATSError) -> [NATSServerOperation] {
        var operations: [NATSServerOperation] = []
        while let operation = try next() { operations.append(operation) }
        return operations
    }

    private mutating func parseNext() throws(NATSError) -> NATSServerOperation? {
        if let message = pending { return try payload(of: message) }
        guard let lineLength = controlLineLength() else {
            if buffer.readableBytes >= maxControlLine {
                throw .protocolViolation("a control line longer than \(maxControlLine) bytes")
            }
            return nil
        }
        guard lineLength + 2 <= maxControlLine else {
            throw .protocolViolation("a control line longer than \(maxControlLine) bytes")
        }
        let line = buffer.readBytes(length: lineLength)!
        buffer.moveReaderIndex(forwardBy: 2)
        return try operation(line)
    }

    /// The length of the line before the first CRLF, nil when none has arrived yet.
    private func controlLineLength() -> Int? {
        let searched = min(buffer.readableBytes, maxControlLine)
        return buffer.withUnsafeReadableBytes { bytes -> Int? in
            var index = 0
            while index + 1 < searched {
                if bytes[index] == 0x0D && bytes[index + 1] == 0x0A { return index }
                index += 1
            }
            return nil
        }
    }

    private mutating func operation(_ line: [UInt8]) throws(NATSError) -> NATSServerOperation? {
        let verbEnd = line.firstIndex { $0 == 0x20 || $0 == 0x09 } ?? line.endIndex
        let verb = String(decoding: line[..<verbEnd], as: UTF8.self).uppercased()
        let rest = line[verbEnd...]
        switch verb {
        case "MSG", "HMSG":
            pending = try messageLine(rest, hasHeaders: verb == "HMSG")
            return try payload(of: pending!)
        case "PING": return .ping
        case "PONG": return .pong
        case "+OK": return .ok
        case "-ERR":
            var text = String(decoding: rest, as: UTF8.self).trimmingSpaces()
            if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") { text = String(text.dropFirst().dropLast()) }
            return .error(text)
        case "INFO":
            let json = Array(rest.drop { $0 == 0x20 || $0 == 0x09 })
            guard json.first == UInt8(ascii: "{") else { throw .protocolViolation("an INFO without a JSON object") }
            return .info(json)
        default:
            let shown = String(decoding: line.prefix(40), as: UTF8.self)
            throw .protocolViolation("an unknown operation '\(shown)'")
        }
    }

    /// `MSG <subject> <sid> [reply-to] <#bytes>` or
    /// `HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>`.
    private func messageLine(_ arguments: ArraySlice<UInt8>, hasHeaders: Bool) throws(NATSError) -> PendingMessage {
        let fields = arguments.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 })
        let sizes = hasHeaders ? 2 : 1
        guard fields.count == 2 + sizes || fields.count == 3 + sizes else {
            throw .protocolViolation("a \(hasHeaders ? "HMSG" : "MSG") line with \(fields.count) arguments")
        }
        guard let sid = UInt64(decimal: fields[1]) else { throw .protocolViolation("a message with a bad subscription id") }
        let numbers = try fields.suffix(sizes).map { field throws(NATSError) -> Int in
            guard let value = Int(decimal: field) else { throw .protocolViolation("a message with a bad byte count") }
            return value
        }
        let total = numbers.last!
        guard total <= maxPayload else {
            throw .protocolViolation("a message of \(total) bytes, over the limit of \(maxPayload)")
        }
        let headerLength = hasHeaders ? numbers[0] : nil
        if let headerLength, headerLength > total {
            throw .protocolViolation("a message whose headers (\(headerLength) bytes) are longer than the whole (\(total))")
        }
        return PendingMessage(
            subject: String(decoding: fields[0], as: UTF8.self), sid: sid,
            replyTo: fields.count == 3 + sizes ? String(decoding: fields[2], as: UTF8.self) : nil,
            headerLength: headerLength, totalLength: total
        )
    }

    private mutating func payload(of message: PendingMessage) throws(NATSError) -> NATSServerOperation? {
        guard buffer.readableBytes >= message.totalLength + 2 else { return nil }
        let bytes = buffer.readBytes(length: message.totalLength)!
        let end = buffer.readBytes(length: 2)!
        guard end == [0x0D, 0x0A] else { throw .protocolViolation("a message payload not followed by CRLF") }
        pending = nil
        var headers: NATSHeaders?
        var body = bytes[...]
        if let headerLength = message.headerLength {
            headers = try NATSHeaders.decode(bytes[..<headerLength])
            body = bytes[headerLength...]
        }
        return .message(NATSMessage(
            subject: message.subject, sid: message.sid, replyTo: message.replyTo,
            headers: headers, payload: Array(body)
        ))
    }
}

extension FixedWidthInteger {
    /// A non-negative decimal of at most 18 digits: the protocol has no signs, and the bound
    /// rules out overflow without a checked multiply per digit.
    init?(decimal digits: ArraySlice<UInt8>) {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Self = 0
        for digit in digits {
            guard digit >= 0x30 && digit <= 0x39 else { return nil }
            value = value * 10 + Self(digit - 0x30)
        }
        self = value
    }
}
