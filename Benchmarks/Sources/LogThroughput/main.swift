// log-throughput: how fast the event log appends under each durability policy, and replays.
//
//   swift run -c release log-throughput            the full run (about a minute)
//   swift run -c release log-throughput --smoke    a few hundred events each, for CI
//
// Synthetic events of about 100 bytes (LogWorkload). Each case writes a fresh log in the
// system's temporary folder. Figures are events per second, best of `--repeat` runs.
import EventLog
import Foundation
import LogWorkload

struct Options {
    var smoke = false
    var repeats = 3
    var markdown = false

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            switch argument {
            case "--smoke": smoke = true; repeats = 1
            case "--markdown": markdown = true
            case "--repeat": repeats = Int(rest.popFirst() ?? "") ?? repeats
            default:
                FileHandle.standardError.write("unknown argument \(argument); use --smoke, --markdown, --repeat N\n".data(using: .utf8)!)
                exit(2)
            }
        }
    }
}

let options = Options(CommandLine.arguments)

func scale(_ full: Int) -> Int { options.smoke ? max(100, full / 200) : full }

func temporaryLog() -> String {
    NSTemporaryDirectory() + "vt-bench-\(UUID().uuidString.prefix(8))"
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

struct Row {
    var name: String
    var events: Int
    var seconds: Double
    var note: String
    var perSecond: Double { Double(events) / seconds }
}

func configuration(_ durability: LogConfiguration.Durability) -> LogConfiguration {
    var configuration = LogConfiguration()
    configuration.durability = durability
    return configuration
}

/// Appends `events` events one per append on `writers` threads; returns the seconds taken.
func appendSingles(_ durability: LogConfiguration.Durability, events: Int, writers: Int = 1) throws -> Double {
    let path = temporaryLog()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let log = try EventLog.open(at: path, configuration: configuration(durability))
    let payloads = (1...UInt64(events)).map { SyntheticEvents.payload(for: $0) }
    let perWriter = events / writers
    let elapsed = try seconds {
        if writers == 1 {
            for payload in payloads { try log.append(payload) }
        } else {
            let group = DispatchGroup()
            for writer in 0..<writers {
                group.enter()
                Thread {
                    for index in writer * perWriter..<(writer + 1) * perWriter { _ = try! log.append(payloads[index]) }
                    group.leave()
                }.start()
            }
            group.wait()
        }
        try log.sync()
    }
    try log.close()
    return elapsed
}

/// Appends `events` events in appends of `batch` events.
func appendBatches(_ durability: LogConfiguration.Durability, events: Int, batch: Int) throws -> (Double, String) {
    let path = temporaryLog()
    let log = try EventLog.open(at: path, configuration: configuration(durability))
    let payloads = (1...UInt64(events)).map { SyntheticEvents.payload(for: $0) }
    let elapsed = try seconds {
        var start = 0
        while start < events {
            try log.append(contentsOf: Array(payloads[start..<min(events, start + batch)]))
            start += batch
        }
        try log.sync()
    }
    try log.close()
    return (elapsed, path)
}

func best(_ body: () throws -> Double) rethrows -> Double {
    var fastest = Double.infinity
    for _ in 0..<options.repeats { fastest = min(fastest, try body()) }
    return fastest
}

var rows: [Row] = []
do {
    let durable = scale(5_000)
    rows.append(Row(name: "always, 1 writer, 1 event per append", events: durable,
                    seconds: try best { try appendSingles(.always, events: durable) }, note: "fdatasync before each append returns"))
    for writers in [4, 8, 32] {
        let events = scale(writers * 2_500)
        rows.append(Row(name: "always, \(writers) writers, 1 event per append", events: events,
                        seconds: try best { try appendSingles(.always, events: events, writers: writers) },
                        note: "group commit shares each fdatasync"))
    }
    let interval = scale(100_000)
    rows.append(Row(name: "interval (50 ms), 1 writer, 1 event per append", events: interval,
                    seconds: try best { try appendSingles(.interval(.milliseconds(50)), events: interval) }, note: "a pwrite per append"))
    rows.append(Row(name: "none, 1 writer, 1 event per append", events: interval,
                    seconds: try best { try appendSingles(.none, events: interval) }, note: "a pwrite per append"))
    let buffered = scale(2_000_000)
    var replayPath = ""
    rows.append(Row(name: "none, batches of 1,000 events", events: buffered, seconds: try best {
        let (elapsed, path) = try appendBatches(.none, events: buffered, batch: 1_000)
        if replayPath.isEmpty { replayPath = path } else { try? FileManager.default.removeItem(atPath: path) }
        return elapsed
    }, note: "the buffered case"))
    defer { try? FileManager.default.removeItem(atPath: replayPath) }

    // Replay: read, check, decompress and decode every event of the batched log.
    let report = try LogVerifier.verify(directory: replayPath)
    var checksum: UInt64 = 0
    let replaySeconds = try best {
        try seconds {
            let cursor = try LogReader(directory: replayPath).events()
            while let event = try cursor.next() { checksum &+= UInt64(event.payload.count) &+ event.sequence }
        }
    }
    rows.append(Row(name: "replay (read, check, decompress, decode)", events: buffered, seconds: replaySeconds,
                    note: "\(Int(Double(report.rawBytes) / replaySeconds / 1_048_576)) MiB/s of events; \(Int(Double(report.storedBytes) / replaySeconds / 1_048_576)) MiB/s from disk (page cache)"))
    let bytesPerEvent = Double(report.storedBytes) / Double(report.events)
    if checksum == 0 { print("") }  // keeps the replay loop from being optimised away

    if options.markdown {
        print("| case | events | events/s | note |")
        print("| --- | ---: | ---: | --- |")
        for row in rows { print("| \(row.name) | \(row.events) | \(Int(row.perSecond)) | \(row.note) |") }
    } else {
        for row in rows {
            let rate = String(Int(row.perSecond))
            print(row.name.padding(toLength: 52, withPad: " ", startingAt: 0)
                  + String(repeating: " ", count: max(0, 12 - rate.count)) + rate + " events/s   " + row.note)
        }
    }
    print("bytes on disk per event (batches of 1,000 synthetic 100-byte events, zstd level 3): \(String(format: "%.1f", bytesPerEvent))")
} catch {
    FileHandle.standardError.write("log-throughput: \(error)\n".data(using: .utf8)!)
    exit(1)
}
