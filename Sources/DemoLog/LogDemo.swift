import EventLog

/// The demo behind `vt demo`: append synthetic events to a log, reopen it, replay and check
/// every event, read one at random, and verify the whole chain. The command line only prints.
///
/// ```swift
/// let report = try LogDemo.run(in: "/tmp/demo", events: 5_000) { print($0) }
/// ```
public enum LogDemo {
    public struct Report: Sendable {
        public var events: UInt64
        public var batches: Int
        public var segments: Int
        public var storedBytes: Int64
        public var rawBytes: Int64
        public var appendSeconds: Double
        public var replaySeconds: Double
        public var headHash: String
        public var recoveryWasClean: Bool
    }

    /// Runs the demo in `directory` (a new log). The first `durableSingles` events are appended
    /// one by one and the rest in batches of `batchSize`. `say` receives progress lines.
    public static func run(
        in directory: String, events: UInt64, durability: LogConfiguration.Durability = .always,
        durableSingles: UInt64 = 100, batchSize: UInt64 = 100, say: (String) -> Void
    ) throws -> Report {
        var configuration = LogConfiguration()
        configuration.durability = durability
        configuration.segmentSize = 1 << 20
        let clock = ContinuousClock()

        let appendStart = clock.now
        let log = try EventLog.open(at: directory, configuration: configuration)
        var next: UInt64 = 1
        while next <= min(durableSingles, events) {
            try log.append(SyntheticEvents.payload(for: next))
            next += 1
        }
        while next <= events {
            let last = min(events, next + batchSize - 1)
            try log.append(contentsOf: (next...last).map { SyntheticEvents.payload(for: $0) })
            next = last + 1
        }
        try log.close()
        let appendSeconds = seconds(clock.now - appendStart)
        say("appended \(events) events of about \(SyntheticEvents.defaultSize) bytes "
            + "(\(min(durableSingles, events)) one at a time, the rest in batches of \(batchSize)) in \(milliseconds(appendSeconds))")

        let reopened = try EventLog.open(at: directory, configuration: configuration)
        say("reopened: \(reopened.recovery.isClean ? "closed cleanly, nothing to recover" : "recovered: \(reopened.recovery)"), last sequence \(reopened.lastSequence)")
        let recoveryWasClean = reopened.recovery.isClean
        try reopened.close()

        let replayStart = clock.now
        let reader = try LogReader(directory: directory)
        let cursor = try reader.events()
        var count: UInt64 = 0
        while let event = try cursor.next() {
            count += 1
            guard event.sequence == count, SyntheticEvents.isPayload(event.payload, of: event.sequence) else {
                throw LogError(.corrupt, "event \(event.sequence) came back different from what was appended")
            }
        }
        let replaySeconds = seconds(clock.now - replayStart)
        say("replayed \(count) events in \(milliseconds(replaySeconds)); every sequence number and payload matches")

        if events > 0 {
            let middle = events / 2 + 1
            let event = try reader.event(at: middle)
            say("random access: event \(middle) was appended at \(event?.timestamp.description ?? "?") and reads \"\(String(decoding: event?.payload.prefix(24) ?? [], as: UTF8.self))…\"")
        }

        let report = try LogVerifier.verify(directory: directory)
        guard report.eventsAreIntact, report.events == events else {
            throw LogError(.corrupt, "verification found problems: \(report.problems)")
        }
        let ratio = report.storedBytes > 0 ? Double(report.rawBytes) / Double(report.storedBytes) : 0
        say("verified \(report.segments) segment(s), \(report.batches) batches: checksums, sequence and hash chain all hold")
        say("on disk: \(report.storedBytes) bytes for \(report.rawBytes) bytes of events "
            + "(compression \(String(format2: ratio))×); head hash \(report.headHash?.description ?? "none")")
        return Report(
            events: count, batches: report.batches, segments: report.segments, storedBytes: report.storedBytes,
            rawBytes: report.rawBytes, appendSeconds: appendSeconds, replaySeconds: replaySeconds,
            headHash: report.headHash?.description ?? "", recoveryWasClean: recoveryWasClean)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ seconds: Double) -> String { "\(String(format2: seconds * 1000)) ms" }
}

extension String {
    /// A number with two decimals, without Foundation's formatters.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = abs(hundredths % 100)
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
