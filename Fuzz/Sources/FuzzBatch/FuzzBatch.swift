// Fuzzes the event log's reading side with whole log directories built from the input:
// segment headers, batch headers, raw and zstd payloads, the hash chain and sparse indexes,
// through the public LogReader, LogVerifier, LogRepair and EventLog.open (recovery), and every
// event that comes out through EventCodec, the fold and the JSON form `vt log --json` prints.
//
// Input: byte 0 holds the options below. The rest is a run of files, each starting at its
// magic (`VTLOGSEG` a segment, `VTLOGIDX` an index) and running to the next magic; a file is
// named by the first sequence its own header holds, as the log names it. With `payloadOnly`,
// the rest is one event payload instead.

import BlobStore
import EventLog
import FileIO
import Foundation
import FuzzSupport
import StorageTestSupport
import VirtualTourist

struct Options: OptionSet {
    let rawValue: UInt8
    /// Recompute every CRC32C before reading: random bytes almost never carry a valid checksum,
    /// so without this the fuzzer would only ever test the checksum comparisons.
    static let fixChecksums = Options(rawValue: 0x01)
    /// Also rewrite each batch's `previous_hash` so that the chain holds (implies checksums).
    static let relinkChain = Options(rawValue: 0x02)
    /// Then cut what `LogRepair` plans to cut; the log must verify afterwards.
    static let repair = Options(rawValue: 0x04)
    /// Then open the log for writing (recovery), append one event and close; the log must
    /// verify afterwards.
    static let openForWriting = Options(rawValue: 0x08)
    /// The input is one event payload, for EventCodec alone.
    static let payloadOnly = Options(rawValue: 0x80)
}

let directory = "/log"
/// Enough events to cover every path; a zstd frame of a few bytes can hold millions of them.
let eventLimit = 5_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let options = Options(rawValue: data[0])
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if options.contains(.payloadOnly) {
        checkPayload(rest)
        return 0
    }
    // A fresh disk in memory for every input: the public reader, verifier, repair and writer
    // run on it unchanged, and nothing touches the real disk.
    // The disk's root is `/`, not the log: an upgrade writes its new log beside the old one.
    let fileSystem = SimulatedDisk(root: "/")
    try! fileSystem.createDirectory(directory)
    let fix = options.contains(.fixChecksums) || options.contains(.relinkChain)
    for (name, bytes) in LogFiles.split(rest, fixChecksums: fix, relink: options.contains(.relinkChain)) {
        fileSystem.overwrite(Path.join(directory, name), with: bytes)
    }
    readEverything(fileSystem)
    if options.contains(.repair) { repair(fileSystem) }
    if options.contains(.openForWriting) { openForWriting(fileSystem) }
    return 0
}

// MARK: - What is done with a log

/// Everything a reader does, as `vt verify`, `vt log`, `vt show` and time travel do it.
func readEverything(_ fileSystem: SimulatedDisk) {
    _ = try? LogVerifier.verify(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
    guard let reader = try? LogReader(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec) else { return }
    let last = (try? reader.lastSequence()) ?? 0
    var state = TouristState()
    var times: [LogTimestamp] = []
    if let cursor = try? reader.events(from: 1) {
        while times.count < eventLimit, let event = try? cursor.next() {
            times.append(event.timestamp)
            // FORMAT.md: sequence numbers are dense from 1, whatever the bytes hold.
            require(
                event.sequence == UInt64(times.count), "the reader gave event \(event.sequence) as number \(times.count)")
            decode(event, into: &state)
        }
    }
    // Random access, and the sparse index by sequence and by time, from the middle and the end.
    _ = try? reader.event(at: max(1, last))
    _ = try? reader.event(at: max(1, last / 2))
    _ = try? reader.head(at: last / 2)
    if !times.isEmpty, let cursor = try? reader.events(since: times[times.count / 2]) {
        for _ in 0..<8 { guard (try? cursor.next()) != nil else { break } }
    }
}

/// One event as the app reads it: decoded, folded, and printed as `vt log --json` does.
func decode(_ event: LogEvent, into state: inout TouristState) {
    guard let recorded = try? EventCodec.decode(event) else { return }
    _ = state.problem(with: recorded.event)
    state.apply(recorded)
    _ = try? EventJSON(recorded).encodedLine()
}

/// `vt repair`: whatever it cuts, what remains must verify.
func repair(_ fileSystem: SimulatedDisk) {
    guard let plan = try? LogRepair.plan(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec), plan.isNeeded else { return }
    _ = plan.description
    do { try LogRepair.execute(plan, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec) } catch { return }
    guard let report = try? LogVerifier.verify(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec) else { return }
    require(report.eventsAreIntact, "the log is still damaged after its repair: \(report.problems)")
}

/// Opening for writing recovers (cuts a torn tail, rebuilds indexes) or refuses. A format-1 log
/// is no longer written: it is upgraded first, whose recovery (LegacyRecovery) only scans each
/// segment's tail, so it may accept older damage; but a log with no corruption must, after
/// recovery and an append, verify with its events intact.
func openForWriting(_ fileSystem: SimulatedDisk) {
    let before = try? LogVerifier.verify(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec)
    let wasSound = before.map { !$0.problems.contains { $0.kind == .corruption } } ?? false
    var configuration = LogConfiguration()
    configuration.payloadCodec = EventCodec.blockCodec
    configuration.durability = .none
    configuration.createIfMissing = false
    configuration.preallocationSize = 0
    // Small, so that the fuzzed segments reach the point where a new one starts.
    configuration.segmentSize = 4096
    configuration.indexInterval = 256
    configuration.clock = FixedClock()
    if (try? LogFormatVersion.of(directory: directory, fileSystem: fileSystem)) == .v1 {
        guard (try? LogUpgrade.upgrade(directory: directory, configuration: configuration, fileSystem: fileSystem)) != nil else { return }
    }
    guard let log = try? EventLog.open(at: directory, configuration: configuration, fileSystem: fileSystem) else {
        return
    }
    let appended = (try? log.append([0x08, 0x01])) != nil
    let lastSequence = log.lastSequence
    do { try log.close() } catch { return }
    guard wasSound, let report = try? LogVerifier.verify(directory: directory, fileSystem: fileSystem, payloadCodec: EventCodec.blockCodec) else { return }
    require(report.eventsAreIntact, "the log does not verify after recovery: \(report.problems)")
    if appended {
        require(report.lastSequence == lastSequence, "verify ends at \(report.lastSequence), the log at \(lastSequence)")
    }
}

/// A clock after every fixture's events, the same on every run.
struct FixedClock: LogClock {
    func now() -> LogTimestamp { LogTimestamp(microsecondsSinceEpoch: 1_900_000_000_000_000) }
}

// MARK: - One payload

/// EventCodec on its own: whatever decodes must survive a round trip through the codec (the
/// fast path and swift-protobuf's must agree on what they read) and through the JSON form, and
/// its pin key must be its pin.
func checkPayload(_ payload: [UInt8]) {
    let time = LogTimestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
    let event = LogEvent(sequence: 7, timestamp: time, payload: payload[...])
    guard let recorded = try? EventCodec.decode(event) else { return }
    // The key compaction records for it (docs/FORMAT.md, "Key summaries"): a pin's history
    // skips blocks by it, so it must be the pin the event decodes to.
    require(EventCodec.pinKeys.key(payload[...]) == recorded.event.pin?.rawValue, "the pin key is not the decoded event's pin")
    var state = TouristState()
    state.apply(recorded)
    let encoded = EventCodec.encode(recorded.event, cause: recorded.cause)
    let again: RecordedEvent
    do {
        again = try EventCodec.decode(LogEvent(sequence: 7, timestamp: event.timestamp, payload: encoded[...]))
    } catch {
        fatalError("an event that decoded does not decode once re-encoded: \(error)")
    }
    // Bytes, not values: a NaN coordinate is not equal to itself.
    require(EventCodec.encode(again.event, cause: again.cause) == encoded, "the event changed in a codec round trip")
    if let line = try? EventJSON(recorded).encodedLine() {
        do {
            let back = try EventJSON.decode(line).recorded()
            require(EventCodec.encode(back.event, cause: back.cause) == encoded, "the event changed in a JSON round trip")
        } catch {
            fatalError("a line EventJSON wrote does not read back: \(error)\n\(line)")
        }
    }
}

// MARK: - Building the log's files

enum LogFiles {
    static let segmentMagic = Array("VTLOGSEG".utf8)
    static let indexMagic = Array("VTLOGIDX".utf8)
    static let batchMagic = Array("VTLB".utf8)

    /// The files in `bytes`, named, with their checksums (and chain) made valid when asked.
    static func split(_ bytes: [UInt8], fixChecksums: Bool, relink: Bool) -> [(String, [UInt8])] {
        var starts: [Int] = []
        var index = 0
        while index + 8 <= bytes.count {
            if bytes[index] == 0x56, bytes[index + 1] == 0x54,  // "VT"
                bytes[index..<index + 8].elementsEqual(segmentMagic) || bytes[index..<index + 8].elementsEqual(indexMagic)
            {
                starts.append(index)
                index += 8
            } else {
                index += 1
            }
        }
        var segments: [(UInt64, [UInt8])] = []
        var indexes: [(UInt64, [UInt8])] = []
        for (position, start) in starts.enumerated() {
            var file = Array(bytes[start..<(position + 1 < starts.count ? starts[position + 1] : bytes.count)])
            let isSegment = file[0..<8].elementsEqual(segmentMagic)
            // The first sequence: offset 16 of a segment header, 12 of an index header.
            let sequenceOffset = isSegment ? 16 : 12
            let sequence = file.count >= sequenceOffset + 8 ? read(UInt64.self, file, sequenceOffset) : 1
            if isSegment {
                if fixChecksums, file.count >= 64 { write(checksum(file[0..<60]), to: &file, at: 60) }
                segments.append((sequence, file))
            } else {
                if fixChecksums { fixIndex(&file) }
                indexes.append((sequence, file))
            }
        }
        // The chain runs through the segments in log order, from the first one's header.
        segments.sort { $0.0 < $1.0 }
        if fixChecksums {
            var previous: [UInt8]? = segments.first.map { $0.1.count >= 64 ? sha256($0.1[0..<64]) : [] }
            for position in segments.indices {
                previous = fixBatches(&segments[position].1, previous: relink ? previous : nil)
            }
        }
        var named: [(String, [UInt8])] = []
        var taken = Set<String>()
        for (sequence, file) in segments {
            let name = NumberedFileName.make(sequence, extension: ".seg")
            if taken.insert(name).inserted { named.append((name, file)) }
        }
        for (sequence, file) in indexes {
            let name = NumberedFileName.make(sequence, extension: ".idx")
            if taken.insert(name).inserted { named.append((name, file)) }
        }
        return named
    }

    /// Walks the batches of a segment, rewriting `previous_hash` (when `previous` is given),
    /// `batch_crc` and `header_crc`. Returns the hash of the last whole batch.
    static func fixBatches(_ file: inout [UInt8], previous: [UInt8]?) -> [UInt8]? {
        var previous = previous
        var position = 64
        while position + 84 <= file.count, file[position..<position + 4].elementsEqual(batchMagic) {
            if let hash = previous, hash.count == 32 {
                file.replaceSubrange(position + 44..<position + 76, with: hash)
            }
            let end = position + 84 + Int(read(UInt32.self, file, position + 20))
            if end <= file.count {
                var crc = CRC32C()
                crc.update(file[position..<position + 76])
                crc.update(file[position + 84..<end])
                write(crc.value, to: &file, at: position + 76)
            }
            write(checksum(file[position..<position + 80]), to: &file, at: position + 80)
            guard end <= file.count else { break }
            previous = sha256(file[position..<end])
            position = end
        }
        return previous
    }

    /// The header's CRC, then each 28-byte entry's (FORMAT.md, "Sparse index file").
    static func fixIndex(_ file: inout [UInt8]) {
        guard file.count >= 24 else { return }
        write(checksum(file[0..<20]), to: &file, at: 20)
        var position = 24
        while position + 28 <= file.count {
            write(checksum(file[position..<position + 24]), to: &file, at: position + 24)
            position += 28
        }
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 { CRC32C.checksum(bytes) }

    static func sha256(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        bytes.withUnsafeBytes { BlobDigest.of($0).bytes }
    }
}
