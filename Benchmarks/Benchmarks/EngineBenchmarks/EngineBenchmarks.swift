// The engine's operations and their SQLite peers under ordo-one's Benchmark: latency
// percentiles, throughput, allocations and peak memory per operation. Run from Benchmarks/:
//
//   swift package --disable-sandbox benchmark
//   swift package --disable-sandbox benchmark --filter "replay"
//   VT_BENCH_SMOKE=1 swift package --disable-sandbox benchmark    a few iterations each (CI)
//
// vt-bench (Sources/Report) gives the whole-workload figures and the targets; this suite is
// for comparing one operation between commits (`benchmark baseline update`, `… compare`).
import Benchmark
import BenchKit
import BlobStore
import EventLog
import Foundation
import GRDB
import VirtualTourist

/// Every fixture lives under one folder, removed after each benchmark.
let fixtureRoot = Measure.temporaryFolder("suite")

func fixtureFolder(_ name: String) -> String {
    let path = fixtureRoot + "/" + name + "-" + UUID().uuidString.prefix(8)
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

final class Appender {
    let log: EventLog
    let payloads: [[UInt8]]
    init(_ durability: LogConfiguration.Durability) throws {
        var configuration = LogConfiguration()
        configuration.payloadCodec = EventCodec.blockCodec
        configuration.durability = durability
        log = try EventLog.open(at: fixtureFolder("log"), configuration: configuration)
        payloads = Fixtures.events(250).map { EventCodec.encode($0, cause: nil) }
    }
}

final class PeerAppender {
    let table: SQLiteEventTable
    let rows: [DatabaseValue]
    init(_ synchronous: SQLiteEventTable.Synchronous) throws {
        table = try SQLiteEventTable(path: fixtureFolder("sqlite") + "/events.sqlite", synchronous: synchronous, payload: .encoded)
        rows = try table.rows(for: Fixtures.events(250), startingAt: 1)
    }
}

final class Replay {
    let log: String
    let peer: SQLiteEventTable
    init(events: Int) throws {
        log = fixtureFolder("replay")
        try Fixtures.writeLog(at: log, events: events)
        peer = try SQLiteEventTable(path: fixtureFolder("sqlite") + "/events.sqlite", synchronous: .normal, payload: .encoded)
        try peer.append(try peer.rows(for: Fixtures.events(events), startingAt: 1))
    }
}

let benchmarks: @Sendable () -> Void = {
    // VT_BENCH_SMOKE=1 (CI): a few iterations each, to prove the suite still runs.
    let smoke = ProcessInfo.processInfo.environment["VT_BENCH_SMOKE"] != nil
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: smoke ? .milliseconds(200) : .seconds(3), maxIterations: smoke ? 20 : 10_000)
    Benchmark.teardown = {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: fixtureRoot)) ?? [] {
            try? FileManager.default.removeItem(atPath: fixtureRoot + "/" + name)
        }
    }

    Benchmark("engine: durable append, 1 event per commit") { benchmark, fixture in
        for index in benchmark.scaledIterations { _ = try fixture.log.append(fixture.payloads[index % 250]) }
    } setup: { try Appender(.always) }

    Benchmark("sqlite FULL: insert, 1 event per transaction") { benchmark, fixture in
        for index in benchmark.scaledIterations { try fixture.table.append(CollectionOfOne(fixture.rows[index % 250])) }
    } setup: { try PeerAppender(.full) }

    Benchmark("engine: buffered append, a 250-event batch") { benchmark, fixture in
        for _ in benchmark.scaledIterations { _ = try fixture.log.append(contentsOf: fixture.payloads) }
    } setup: { try Appender(.none) }

    Benchmark("sqlite NORMAL: insert 250 events in one transaction") { benchmark, fixture in
        for _ in benchmark.scaledIterations { try fixture.table.append(fixture.rows) }
    } setup: { try PeerAppender(.normal) }

    Benchmark("engine: cold replay of 10,000 events", configuration: .init(maxIterations: smoke ? 5 : 200)) { benchmark, fixture in
        for _ in benchmark.scaledIterations { blackHole(try Fixtures.replay(fixture.log)) }
    } setup: { try Replay(events: 10_000) }

    Benchmark("sqlite: replay of 10,000 events (select, decode, fold)", configuration: .init(maxIterations: smoke ? 5 : 200)) { benchmark, fixture in
        for _ in benchmark.scaledIterations { blackHole(try fixture.peer.replay()) }
    } setup: { try Replay(events: 10_000) }

    Benchmark("engine: decode one event", configuration: .init(scalingFactor: .kilo)) { benchmark, events in
        for index in benchmark.scaledIterations { blackHole(try EventCodec.decode(events[index % events.count])) }
    } setup: {
        Fixtures.events(1_000).enumerated().map { index, event in
            LogEvent(sequence: UInt64(index + 1), timestamp: LogTimestamp(microsecondsSinceEpoch: 0), payload: EventCodec.encode(event, cause: nil)[...])
        }
    }

    Benchmark("blobs: put a 30 KB photo, durable") { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            // A new photo each time (its first bytes count up), so every put writes.
            fixture.counter += 1
            withUnsafeBytes(of: fixture.counter) { fixture.photo.replaceSubrange(4..<12, with: $0) }
            blackHole(try fixture.store.put(fixture.photo))
        }
    } setup: { try BlobFixture() }
}

final class BlobFixture {
    let store: BlobStore
    var photo: [UInt8]
    var counter: UInt64 = 0
    init() throws {
        store = try BlobStore(directory: fixtureFolder("blobs"))
        photo = Fixtures.photo(seed: 7, size: 30_000)
    }
}
