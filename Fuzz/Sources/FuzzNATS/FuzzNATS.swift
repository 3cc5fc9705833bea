// Fuzzes the NATS client's wire parser (NATSWireParser, NATSHeaders): any bytes a server, or
// something pretending to be one, may send. Bytes either parse into operations or end in a
// NATSError, never a crash; and the parse must not depend on how TCP cut the stream (docs/NATS.md).
//
// Input: byte 0 seeds the piece sizes the stream is cut into; the rest is the stream. The
// stream is also read as a URL list (NATSServerURL.parseList).

import FuzzSupport
import NATSClient

let maxControlLine = 256
let maxPayload = 4096

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let seed = data[0]
    let stream = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = parse([stream[...]])
    let split = parse(pieces(of: stream, seed: seed))
    require(whole == split, "the parse depends on the split: \(whole) versus \(split)")
    for operation in whole.operations { check(operation) }
    if stream.count <= 512 { checkURLs(String(decoding: stream, as: UTF8.self)) }
    return 0
}

struct Outcome: Equatable {
    var operations: [NATSServerOperation] = []
    var failed = false
}

func parse(_ pieces: [ArraySlice<UInt8>]) -> Outcome {
    var parser = NATSWireParser(maxControlLine: maxControlLine, maxPayload: maxPayload)
    var outcome = Outcome()
    do {
        for piece in pieces {
            parser.append(piece)
            // next() one by one: drain() would drop the operations read before an error.
            while let operation = try parser.next() { outcome.operations.append(operation) }
            // Holding more than one control line and one payload means a limit is not enforced.
            require(parser.bufferedBytes <= maxControlLine + maxPayload + 2 + piece.count, "the parser holds \(parser.bufferedBytes) bytes")
        }
    } catch {
        outcome.failed = true
    }
    return outcome
}

/// The stream cut at sizes from a small generator seeded by `seed` (1 to 16 bytes, sometimes 0).
func pieces(of stream: [UInt8], seed: UInt8) -> [ArraySlice<UInt8>] {
    var state = UInt32(seed) &* 2_654_435_761 | 1
    var result: [ArraySlice<UInt8>] = []
    var offset = 0
    while offset < stream.count {
        state ^= state << 13
        state ^= state >> 17
        state ^= state << 5
        let length = min(Int(state % 17), stream.count - offset)
        result.append(stream[offset..<offset + length])
        offset += length
    }
    return result
}

/// A message within the limits survives being written back in the protocol and read again.
func check(_ operation: NATSServerOperation) {
    guard case .message(let message) = operation else { return }
    require(message.payload.count <= maxPayload, "a payload of \(message.payload.count) bytes passed the limit")
    if let status = message.headers?.status { require((100...999).contains(status), "status \(status)") }
    var bytes: [UInt8] = []
    let reply = message.replyTo.map { " \($0)" } ?? ""
    if let headers = message.headers {
        let block = headers.encoded()
        bytes += Array("HMSG \(message.subject) \(message.sid)\(reply) \(block.count) \(block.count + message.payload.count)\r\n".utf8)
        bytes += block
    } else {
        bytes += Array("MSG \(message.subject) \(message.sid)\(reply) \(message.payload.count)\r\n".utf8)
    }
    bytes += message.payload + [0x0D, 0x0A]
    var parser = NATSWireParser(maxControlLine: 1 << 20, maxPayload: 1 << 20)
    parser.append(bytes)
    let again = try? parser.drain()
    require(again == [operation], "a message does not survive a round trip: \(operation) became \(String(describing: again))")
}

/// Parsed URLs have a host and a port in range, and their description hides credentials.
func checkURLs(_ text: String) {
    guard let urls = try? NATSServerURL.parseList(text) else { return }
    for url in urls {
        require(!url.host.isEmpty && (1...65535).contains(url.port), "a URL out of range: \(url)")
        if url.credentials != .none { require(url.description.contains("***@"), "credentials shown: \(url)") }
    }
}
