import DemoLog
@testable import EventLog
import FieldColumns
import FileIO
import Foundation
import LegacyLogWriter
import StorageTestSupport
import Testing

/// The synthetic payload of event `sequence` (see LogWorkload).
func syntheticPayload(_ sequence: UInt64) -> [UInt8] { SyntheticEvents.payload(for: sequence) }

/// A log's configuration for a test: format 2, as the product writes. `segmentSize` is where a
/// segment rolls (a hot-tail segment in format 2, a segment in format 1).
func configuration(
    clock: TestClock = TestClock(), durability: LogConfiguration.Durability = .always,
    segmentSize: Int? = nil, indexInterval: Int = 16 << 10
) -> LogConfiguration {
    var configuration = LogConfiguration()
    configuration.clock = clock
    configuration.durability = durability
    // Compaction has tests of its own (Format2CompactionTests, and those that turn it on): in
    // the others it would only take a core from the tests running beside them.
    configuration.compactsInBackground = false
    if let segmentSize {
        configuration.segmentSize = segmentSize
        configuration.hotTailSegmentSize = segmentSize
    }
    configuration.indexInterval = indexInterval
    return configuration
}

/// The same, writing format 1 (through the test-only `LegacyLogWriter`): for the tests of
/// format 1's bytes (batches, segments, indexes), which the product still reads, verifies,
/// repairs and upgrades.
func legacyConfiguration(
    clock: TestClock = TestClock(), durability: LogConfiguration.Durability = .always,
    segmentSize: Int? = nil, indexInterval: Int = 16 << 10
) -> LogConfiguration {
    var legacy = configuration(clock: clock, durability: durability, segmentSize: segmentSize, indexInterval: indexInterval)
    legacy.writesFormatOne = true
    return legacy
}

/// Every event of the log at `path`; a log whose blocks are in codec 2 is read with the field
/// columns (the tests that configure no payload codec write none).
func readAll(_ path: String, from sequence: UInt64 = 1) throws -> [LogEvent] {
    let cursor = try LogReader(directory: path, payloadCodec: FieldColumnsCodec()).events(from: sequence)
    var events: [LogEvent] = []
    while let event = try cursor.next() { events.append(event) }
    return events
}

/// The segment files of a log, sorted.
func segmentFiles(_ path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
        .map { path + "/" + $0 }
}

/// Every file under a directory, by relative path, with its bytes: to prove that a refused
/// operation changed nothing on disk. `LOCK` is left out: taking the writer's lock writes the
/// holder's name into it, which is what it is for, and it holds no data.
func snapshot(_ path: String) throws -> [String: [UInt8]] {
    var files: [String: [UInt8]] = [:]
    guard let walker = FileManager.default.enumerator(atPath: path) else { return files }
    while let name = walker.nextObject() as? String {
        if name == "LOCK" { continue }
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory)
        if !isDirectory.boolValue {
            files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))
        }
    }
    return files
}

func copyDirectory(_ source: String, to destination: String) throws {
    try? FileManager.default.removeItem(atPath: destination)
    try FileManager.default.copyItem(atPath: source, toPath: destination)
}

func readBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

extension HelperProcess {
    /// The EventLogHelper with these arguments.
    convenience init(_ arguments: [String]) throws { try self.init("EventLogHelper", arguments) }
}

/// Expects `body` to throw a ``LogError`` with `code`, and returns it for further checks.
@discardableResult
func expectLogError<T>(
    _ code: LogError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> LogError? {
    do {
        _ = try body()
        Issue.record("expected a \(code) error, but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as LogError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a LogError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// A batch as found by walking a segment's bytes with FORMAT.md's layout (test-side parser).
struct BatchLocation: Equatable {
    var offset: Int
    var size: Int
    var firstSequence: UInt64
    var count: Int
}

func batchLocations(_ segment: [UInt8]) -> [BatchLocation] {
    var result: [BatchLocation] = []
    var offset = 64
    while offset + 84 <= segment.count, segment[offset] == 0x56 {
        let stored = Int(IndependentBytes.u32(segment, offset + 20))
        result.append(BatchLocation(
            offset: offset, size: 84 + stored, firstSequence: IndependentBytes.u64(segment, offset + 8),
            count: Int(IndependentBytes.u32(segment, offset + 16))))
        offset += 84 + stored
    }
    return result
}

/// Writes a format-1 log of `events` single-event appends in segments of `segmentSize` bytes.
func makeSegmentedLog(_ path: String, events: UInt64, segmentSize: Int = 4096, clock: TestClock = TestClock()) throws {
    let log = try EventLog.open(
        at: path, configuration: legacyConfiguration(clock: clock, durability: .none, segmentSize: segmentSize, indexInterval: 512))
    for sequence in 1...events {
        try log.append(syntheticPayload(sequence))
        clock.advance(microseconds: 10)
    }
    try log.close()
}

/// Writes `value` little-endian over `bytes[offset...]`, as the log's formats store numbers.
func setField<T: FixedWidthInteger>(_ value: T, in bytes: inout [UInt8], at offset: Int) {
    bytes.replaceSubrange(offset..<offset + MemoryLayout<T>.size, with: withUnsafeBytes(of: value.littleEndian, Array.init))
}

func flipByte(at offset: Int, in path: String, mask: UInt8 = 0x01) throws {
    var bytes = try readBytes(path)
    bytes[offset] ^= mask
    try writeBytes(bytes, to: path)
}
