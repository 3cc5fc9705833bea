// Fuzzes what a reader of a store's replication stream takes from the cluster
// (docs/REPLICATION.md, "Messages"): a message's headers and body through ShippedChainCheck, as
// a restore reads a stream's first message. Bytes either give checked events or a
// ReplicationError, never a crash. A batch the check accepts must read back as written; cut in
// two messages it must read as a follower reads on (a check that holds the first, or one
// repositioned after it, takes the second; the whole again, another log's, or the second
// alone are refused and change nothing); and a replica must take it the two ways replicas take
// events, on the tests' in-memory disk, with the store's pin keys: built into a new log
// (LogBuilder, as a restore builds one) and appended to the open log after it
// (EventLog.append, or appendAsBlock when the events include erased ones, as a follower does).
// Either way the replica's head is the one shipped, it verifies with its key summaries, and
// it reads back the events.
//
// Input: byte 0 holds the options below; bytes 1 and 2 the length (little-endian) of a header
// block in NATS form ("NATS/1.0\r\nName: value\r\n\r\n"); then that block; the rest is the body.

import EventLog
import FileIO
import FuzzSupport
import NATSClient
import Replication
import StorageTestSupport
import VirtualTourist

struct Options: OptionSet {
    let rawValue: UInt8
    /// Number the events from 1 and write the head the events chain to from the fixed log's
    /// anchor, so that mutations get past the chain check to the replica.
    static let fixChain = Options(rawValue: 0x01)
    /// Recompute the body's CRC32C (after any change above).
    static let fixChecksum = Options(rawValue: 0x02)
    /// Headers written from the body, so that they agree with it, instead of the input's block.
    static let headersFromBody = Options(rawValue: 0x04)
}

let identity = LogIdentity(logID: Array(repeating: 0x5A, count: 16), origin: LogOrigin(sequence: 0, hash: nil))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let options = Options(rawValue: data[0])
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let headerLength = min(Int(read(UInt16.self, input, 1)), size - 3)
    let headerBlock = input[3..<3 + headerLength]
    var body = Array(input[(3 + headerLength)...])
    if options.contains(.fixChain) { fixChain(&body) }
    if options.contains(.fixChecksum), body.count >= 4 {
        write(CRC32C.checksum(body[..<(body.count - 4)]), to: &body, at: body.count - 4)
    }
    let headers = options.contains(.headersFromBody) ? headers(for: body) : try? NATSHeaders.decode(headerBlock)

    var check = ShippedChainCheck()
    let events: [LogEvent]
    do {
        events = try check.events(headers: headers, body: body, place: "message 1")
    } catch let error as ReplicationError {
        require(check.chain == nil && check.identity == nil, "a refused message changed the check")
        require("\(error)".contains("message 1"), "the error does not name the message: \(error)")
        return 0
    } catch {
        fatalError("a message was refused with \(type(of: error)), not a ReplicationError: \(error)")
    }
    accepted(events, body: body, headers: headers, check: check)
    return 0
}

/// What must hold of a message the check accepted: its events and head round trip, the same
/// message again adds nothing, and replicas take it.
func accepted(_ events: [LogEvent], body: [UInt8], headers: NATSHeaders?, check: ShippedChainCheck) {
    require(!events.isEmpty && events[0].sequence == 1, "the first message of a copy gave events from \(events.first?.sequence ?? 0)")
    for (index, event) in events.enumerated() {
        require(event.sequence == UInt64(index) + 1, "event \(index) has the sequence \(event.sequence)")
        require(index == 0 || event.timestamp >= events[index - 1].timestamp, "event \(event.sequence)'s time goes back")
    }
    guard let chain = check.chain, let shipped = check.identity else { fatalError("an accepted message left no chain or identity") }
    require(chain.sequence == events[events.count - 1].sequence, "the chain stops at \(chain.sequence)")
    require(ReplicationBatch(events: events, head: chain.head).encoded() == body, "the batch does not encode back to its body")

    var again = check
    do {
        require(try again.events(headers: headers, body: body, place: "again").isEmpty, "a message read twice gave events twice")
    } catch {
        fatalError("a message accepted once was refused the second time: \(error)")
    }
    require(again.chain == check.chain, "a message read twice moved the chain")
    if events.count >= 2 { readOn(events, identity: shipped) }
    replicate(events, identity: shipped, head: LogHead(sequence: chain.sequence, hash: chain.head))
}

/// The events as two messages, read as a follower reads on: after the first, the second gives
/// the rest, from a check that read the first or one repositioned after it; what does not
/// follow is refused and leaves the check as it was.
func readOn(_ events: [LogEvent], identity: LogIdentity) {
    let cut = events.count / 2
    var chain = EventChain(head: identity.anchor, after: 0)
    for event in events[..<cut] { chain.append(event) }
    let afterFirst = LogHead(sequence: chain.sequence, hash: chain.head)
    for event in events[cut...] { chain.append(event) }
    func message(_ part: ArraySlice<LogEvent>, head: ChainHash, logID: [UInt8] = identity.logID) -> (NATSHeaders?, [UInt8]) {
        let body = ReplicationBatch(events: Array(part), head: head).encoded()
        return (headers(for: body, logID: logID), body)
    }
    let first = message(events[..<cut], head: afterFirst.hash)
    let second = message(events[cut...], head: chain.head)
    let whole = message(events[...], head: chain.head)
    let foreign = message(events[cut...], head: chain.head, logID: Array(repeating: 0xA5, count: 16))

    do {
        var reading = ShippedChainCheck()
        require(try reading.events(headers: first.0, body: first.1, place: "first") == Array(events[..<cut]), "the first part read wrong")
        var repositioned = ShippedChainCheck(identity: identity, after: afterFirst)
        for (check, name) in [(reading, "reading on"), (repositioned, "repositioned")] {
            var check = check
            refused(&check, whole, "the whole, which starts inside what the check holds (\(name))")
            refused(&check, foreign, "another log's second part (\(name))")
            let rest = try check.events(headers: second.0, body: second.1, place: "second")
            require(rest == Array(events[cut...]), "the second part read wrong (\(name))")
            require(check.chain == chain, "the chain ends wrong (\(name))")
            require(try check.events(headers: first.0, body: first.1, place: "first again").isEmpty, "the first part again gave events (\(name))")
        }
        var fresh = ShippedChainCheck()
        refused(&fresh, second, "the second part with no first")
        repositioned.reposition(after: LogHead(sequence: 0, hash: identity.anchor))
        refused(&repositioned, second, "the second part after a reposition to the start")
    } catch {
        fatalError("a part a follower takes was refused: \(error)")
    }
}

/// `message` must be refused with an error naming it, and leave `check` as it was.
func refused(_ check: inout ShippedChainCheck, _ message: (NATSHeaders?, [UInt8]), _ what: String) {
    let before = (check.identity, check.chain)
    do {
        _ = try check.events(headers: message.0, body: message.1, place: "probe")
        fatalError("\(what) was accepted")
    } catch let error as ReplicationError {
        require("\(error)".contains("probe"), "the error does not name the message: \(error)")
    } catch {
        fatalError("\(what) was refused with \(type(of: error)), not a ReplicationError: \(error)")
    }
    require(check.identity == before.0 && check.chain == before.1, "\(what) changed the check")
}

/// Builds a replica of the first half of the events and appends the rest to it.
func replicate(_ events: [LogEvent], identity: LogIdentity, head: LogHead) {
    // As a restore and a replica store open theirs: with the pin keys, whose summaries the
    // verifier compares.
    var configuration = LogConfiguration.touristStore
    configuration.blockSize = 512
    configuration.hotTailSegmentSize = 4096
    configuration.compactsInBackground = false
    let disk = SimulatedDisk(root: "/replica")
    let directory = "/replica/log"
    let split = events.count / 2
    do {
        var builder = try LogBuilder(directory: directory, identity: identity, configuration: configuration, fileSystem: disk)
        for event in events[..<split] { try builder.add(event) }
        _ = try builder.finish()
        let log = try EventLog.open(at: directory, configuration: configuration, fileSystem: disk)
        let rest = Array(events[split...])
        if rest.contains(where: \.isErased) {
            _ = try log.appendAsBlock(rest)
        } else {
            _ = try log.append(contentsOf: rest.map { Array($0.payload) }, timestamps: rest.map(\.timestamp))
        }
        require(log.head == head, "the replica's head \(log.head) is not the one shipped, \(head)")
        try log.close()
        let report = try LogVerifier.verify(directory: directory, fileSystem: disk, keys: configuration.blockKeys, payloadCodec: EventCodec.blockCodec)
        require(report.isClean, "the replica does not verify: \(report.problems)")
        let cursor = try LogReader(directory: directory, fileSystem: disk, payloadCodec: EventCodec.blockCodec).events(from: 1)
        var read: [LogEvent] = []
        while let event = try cursor.next() { read.append(event) }
        require(read == events, "the replica reads back \(read.count) events, not the \(events.count) shipped")
    } catch {
        fatalError("a replica did not take a batch the check accepted: \(error)")
    }
}

/// The events the body's layout holds, as far as it holds them (REPLICATION.md, "Messages").
func eventsLaidOut(in body: [UInt8]) -> [(time: Int64, erased: Bool, payload: Range<Int>)] {
    guard body.count >= 52 else { return [] }
    let count = Int(read(UInt32.self, body, 12))
    var events: [(Int64, Bool, Range<Int>)] = []
    var offset = 48
    while events.count < count, offset + 13 <= body.count - 4 {
        let length = Int(read(UInt32.self, body, offset + 9))
        guard length <= body.count - 4 - offset - 13 else { break }
        events.append((Int64(bitPattern: read(UInt64.self, body, offset)), body[offset + 8] == 1, offset + 13..<offset + 13 + length))
        offset += 13 + length
    }
    return events
}

/// Numbers the body's events from 1 and writes the head they chain to from the fixed log's
/// anchor (an erased event by its digest, as the log's chain takes it).
func fixChain(_ body: inout [UInt8]) {
    guard body.count >= 52 else { return }
    write(UInt64(1), to: &body, at: 4)
    var chain = EventChain(head: identity.anchor, after: 0)
    for event in eventsLaidOut(in: body) {
        let time = LogTimestamp(microsecondsSinceEpoch: event.time)
        body.withUnsafeBytes { bytes in
            let payload = UnsafeRawBufferPointer(rebasing: bytes[event.payload])
            if event.erased, payload.count >= 32 {
                chain.append(time: time, digest: UnsafeRawBufferPointer(rebasing: payload[..<32]))
            } else {
                chain.append(time: time, payload: payload)
            }
        }
    }
    body.replaceSubrange(16..<48, with: chain.head.bytes)
}

/// The headers a replicator would write for this body, read from the body itself.
func headers(for body: [UInt8], logID: [UInt8] = identity.logID) -> NATSHeaders? {
    guard body.count >= 52 else { return nil }
    let first = read(UInt64.self, body, 4)
    let count = UInt64(read(UInt32.self, body, 12))
    let (last, overflow) = first.addingReportingOverflow(max(count, 1) - 1)
    guard !overflow else { return nil }
    var headers = NATSHeaders()
    do {
        try headers.set("Vt-Log-Id", LogIdentity(logID: logID, origin: identity.origin).logIDHex)
        try headers.set("Vt-Origin-Sequence", "0")
        try headers.set("Vt-First", String(first))
        try headers.set("Vt-Last", String(last))
        try headers.set("Vt-Head", ChainHash(validating: Array(body[16..<48]))!.description)
    } catch {
        fatalError("the replicator's own headers could not be written: \(error)")
    }
    return headers
}
