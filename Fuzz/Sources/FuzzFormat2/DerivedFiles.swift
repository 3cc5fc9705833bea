// The derived files beside a format-2 log (docs/FORMAT.md, "Key summaries", "Tail
// checkpoint"): whatever a `.keys` or `.head` file holds, it may cost time, never a wrong answer.
// A real log is built once on the tests' in-memory disk; each input replaces one of its derived
// files, read through the public LogReader and EventLog.open, and the answers are compared with
// what the log holds.

import EventLog
import FieldColumns
import FileIO
import FuzzSupport
import StorageTestSupport

/// A small log with block files (several blocks each, with key summaries) and an active segment
/// holding records, closed cleanly so that a tail checkpoint lies beside it.
struct DerivedFixture {
    static let directory = "/log"
    /// Key: the payload's first byte, none when it is 0 (so some events carry no key).
    static let keys = BlockKeys(name: "first-byte") { payload in payload.first.flatMap { $0 == 0 ? nil : UInt64($0) } }

    /// The log's files by name.
    let files: [String: [UInt8]]
    /// Every event's sequence and key.
    let events: [(sequence: UInt64, key: UInt64?)]
    let head: LogHead
    let summaryName: String
    let checkpointName: String

    static let shared = DerivedFixture()

    static var configuration: LogConfiguration {
        var configuration = LogConfiguration()
        configuration.payloadCodec = FieldColumnsCodec()
        configuration.hotTailSegmentSize = 4096
        configuration.blockSize = 512
        configuration.blockKeys = keys
        configuration.compactsInBackground = false
        configuration.tailCheckpointInterval = 1024
        configuration.newLogID = Array(repeating: 7, count: 16)
        return configuration
    }

    private init() {
        let disk = SimulatedDisk(root: Self.directory)
        var events: [(UInt64, UInt64?)] = []
        do {
            let log = try EventLog.open(at: Self.directory, configuration: Self.configuration, fileSystem: disk)
            var time: Int64 = 1_700_000_000_000_000
            for round in 0..<2 {
                for index in 0..<150 {
                    let first = UInt8((index * 7 + round * 3) % 13)
                    let payload = [first] + Array(repeating: UInt8(index & 0xFF), count: 12 + index % 9)
                    time += Int64(index % 4) * 1_000
                    let sequence = try log.append(contentsOf: [payload], timestamps: [LogTimestamp(microsecondsSinceEpoch: time)])
                    events.append((sequence.lowerBound, Self.keys.key(payload[...])))
                }
                if round == 0 { _ = try log.compact() }
            }
            let head = log.head
            try log.close()
            self.head = head
        } catch {
            fatalError("the fixture log could not be built: \(error)")
        }
        files = disk.files(under: Self.directory)
        self.events = events
        guard let summary = files.keys.first(where: { $0.hasSuffix(".keys") }),
            let checkpoint = files.keys.first(where: { $0.hasSuffix(".head") })
        else { fatalError("the fixture log has no key summary or tail checkpoint: \(files.keys.sorted())") }
        summaryName = summary
        checkpointName = checkpoint
    }

    /// A disk holding the log with the bytes of the file named `name` replaced.
    func disk(replacing name: String, with bytes: [UInt8]) -> SimulatedDisk {
        let disk = SimulatedDisk(root: Self.directory)
        for (other, content) in files where other != name { disk.overwrite(Path.join(Self.directory, other), with: content) }
        disk.overwrite(Path.join(Self.directory, name), with: bytes)
        return disk
    }
}

/// XORs the input onto the genuine file (so mutations stay near what a writer writes), then,
/// when asked, makes its checksums hold again.
func mutated(_ genuine: [UInt8], by input: [UInt8]) -> [UInt8] {
    var bytes = genuine
    for (index, byte) in input.enumerated() {
        if index < bytes.count { bytes[index] ^= byte } else { bytes.append(byte) }
    }
    return bytes
}

/// A key summary: every event whose key is asked about lies inside the ranges returned.
func fuzzKeySummary(_ input: [UInt8], fix: Bool) {
    let fixture = DerivedFixture.shared
    var bytes = mutated(fixture.files[fixture.summaryName]!, by: input)
    if fix, bytes.count >= 84 {
        write(CRC32C.checksum(bytes[0..<76]), to: &bytes, at: 76)
        write(CRC32C.checksum(bytes[80..<bytes.count - 4]), to: &bytes, at: bytes.count - 4)
    }
    let disk = fixture.disk(replacing: fixture.summaryName, with: bytes)
    let last = fixture.events.last!.sequence
    var leftOut = false
    do {
        let reader = try LogReader(directory: DerivedFixture.directory, fileSystem: disk, payloadCodec: FieldColumnsCodec())
        for asked in [1...1, 5...5, 12...12, 3...9, 0...UInt64.max] as [ClosedRange<UInt64>] {
            let ranges = try reader.ranges(mayHoldKeysIn: asked, function: DerivedFixture.keys.name, from: 1, through: last)
            for (earlier, later) in zip(ranges, ranges.dropFirst()) {
                require(earlier.upperBound < later.lowerBound, "ranges out of order or overlapping: \(ranges)")
            }
            require(ranges.allSatisfy { $0.lowerBound >= 1 && $0.upperBound <= last }, "a range outside the log: \(ranges)")
            for event in fixture.events where event.key.map(asked.contains) == true && !ranges.contains(where: { $0.contains(event.sequence) }) {
                // A summary is derived data, trusted when it passes its checks (FORMAT.md, "Key
                // summaries"): with its checksums remade it can name other keys than its blocks
                // hold. An event may be left out only when the summary's own entry for its block
                // does not name its key.
                require(
                    fix && !summaryNames(event.key!, forBlockOf: event.sequence, in: bytes),
                    "event \(event.sequence) with key \(event.key!) left out of \(ranges) for \(asked), though the summary names it")
                leftOut = true
            }
        }
        // Whatever the summary holds, the events are intact; one that hides an event from a
        // question is what verify, given the key function, must report.
        let report = try LogVerifier.verify(directory: DerivedFixture.directory, fileSystem: disk, keys: DerivedFixture.keys, payloadCodec: FieldColumnsCodec())
        require(report.eventsAreIntact, "a key summary made verify report damage: \(report.problems)")
        require(
            !leftOut || report.problems.contains { $0.kind == .keySummary },
            "a summary hid events from a key question and verify did not report it: \(report.problems)")
    } catch {
        fatalError("a key summary made reading fail: \(error)")
    }
}

/// Whether the summary in `bytes` (laid out as FORMAT.md's "Key summaries" says, already found
/// usable by the reader) lists `key` for the block holding `sequence`: the entry with the
/// greatest first sequence at or before it.
func summaryNames(_ key: UInt64, forBlockOf sequence: UInt64, in bytes: [UInt8]) -> Bool {
    var offset = 80
    var names = false
    while offset + 12 <= bytes.count - 4 {
        let first = read(UInt64.self, bytes, offset)
        let count = Int(read(UInt32.self, bytes, offset + 8))
        offset += 12
        guard count <= (bytes.count - 4 - offset) / 8 else { return names }
        if first > sequence { return names }
        names = (0..<count).contains { read(UInt64.self, bytes, offset + 8 * $0) == key }
        offset += 8 * count
    }
    return names
}

/// A tail checkpoint: the log opens with the head its events give, takes an append and verifies.
func fuzzTailCheckpoint(_ input: [UInt8], fix: Bool) {
    let fixture = DerivedFixture.shared
    var bytes = mutated(fixture.files[fixture.checkpointName]!, by: input)
    // Version 2 keeps its checksum at 152, version 1 at 96 (docs/FORMAT.md, "Tail checkpoint").
    if fix, bytes.count >= 156 {
        write(CRC32C.checksum(bytes[0..<152]), to: &bytes, at: 152)
    } else if fix, bytes.count >= 100 {
        write(CRC32C.checksum(bytes[0..<96]), to: &bytes, at: 96)
    }
    let disk = fixture.disk(replacing: fixture.checkpointName, with: bytes)
    do {
        let log = try EventLog.open(at: DerivedFixture.directory, configuration: DerivedFixture.configuration, fileSystem: disk)
        require(log.head == fixture.head, "opened at \(log.head), the events give \(fixture.head)")
        // This disk wants its calls in one order, so the checkpoint was checked during the
        // open: a start handed on is the events' own.
        if let start = log.previousWriterStart {
            let reader = try LogReader(directory: DerivedFixture.directory, fileSystem: disk, payloadCodec: FieldColumnsCodec())
            require(try reader.head(at: start.sequence) == start, "the tail start \(start) is not the events' head there")
        }
        _ = try log.append(contentsOf: [[1, 2, 3]], timestamps: [LogTimestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)])
        try log.close()
        let report = try LogVerifier.verify(directory: DerivedFixture.directory, fileSystem: disk, payloadCodec: FieldColumnsCodec())
        require(report.isClean, "the log does not verify after an open from a tail checkpoint: \(report.problems)")
    } catch {
        fatalError("a tail checkpoint made the open, an append or the verify fail: \(error)")
    }
}
