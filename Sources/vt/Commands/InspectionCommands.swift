import ArgumentParser
import Foundation
import EventLog
import VirtualTourist

/// `vt log`: the events, filtered, optionally following new ones as they land.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "List events, oldest first.",
        discussion: "TIME is ISO 8601 (2026-11-21T09:30:00Z), a date (2026-11-21) or a span before now (90s, 15m, 2h, 3d). With --json, one JSON object per line (docs/EXPORT.md).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The first sequence number to show.") var from: UInt64?
    @Option(help: "The last sequence number to show.") var to: UInt64?
    @Option(help: ArgumentHelp("Events at or after this time.", valueName: "TIME")) var since: String?
    @Option(help: ArgumentHelp("Events at or before this time.", valueName: "TIME")) var until: String?
    @Option(help: ArgumentHelp("Only events of this type (repeatable): \(DomainEvent.typeNames.joined(separator: ", ")).", valueName: "TYPE"))
    var type: [String] = []
    @Option(help: "Only events about this pin (an id or unique prefix; removed pins too).") var pin: String?
    @Option(help: ArgumentHelp("Only the events of this device: its id, a unique prefix of it, or its name (vt device lists them).", valueName: "DEVICE"))
    var device: String?
    @Flag(help: "After the last event, wait for new ones and show them as they land (Ctrl-C to stop).") var follow = false

    func validate() throws {
        if let from, from == 0 { throw ValidationError("--from: sequence numbers start at 1") }
        if let from, let to, to < from { throw ValidationError("--to \(to) is before --from \(from)") }
        if follow, to != nil || until != nil { throw ValidationError("--follow cannot be combined with --to or --until") }
        _ = try types()
        if let since { _ = try ArgumentValues.time(since) }
        if let until { _ = try ArgumentValues.time(until) }
    }

    func types() throws -> Swift.Set<String> {
        Swift.Set(try type.map { wanted in
            guard let name = DomainEvent.typeNames.first(where: { $0.lowercased() == wanted.lowercased() }) else {
                throw ValidationError("--type \(wanted) is not an event type; the types are \(DomainEvent.typeNames.joined(separator: ", "))")
            }
            return name
        })
    }

    func run() async throws {
        let reader = try global.reader()
        let types = try types()
        // A store of one device writes no origins: its events are all this device's.
        let origin = try device.map { try DeviceArgument.resolve($0, store: global.storePath) }
        let this = origin == nil ? nil : try StoreSync.devices(of: global.storePath).this.device
        let since = try since.map { try ArgumentValues.time($0) }
        let until = try until.map { try ArgumentValues.time($0) }
        var start = from ?? 1
        if let since { start = max(start, try reader.sequence(atTime: since.adding(microseconds: -1)) + 1) }
        // The pin and its events in one read (for a pin that is gone, one pass finds both).
        let (pinID, aboutPin) = try pin.map { try reader.events(aboutPinMatching: $0, from: start, through: to) } ?? (nil, [])
        if let from, from > reader.lastSequence + (follow ? 1 : 0) {
            throw RuntimeError(message: "--from \(from) is past the end: \(reader.lastSequence == 0 ? "the log is empty" : "the log holds 1…\(reader.lastSequence)")")
        }
        let wanted = { (event: RecordedEvent) -> Bool in
            (types.isEmpty || types.contains(event.event.typeName)) && (pinID == nil || event.event.pin == pinID)
                && (since.map { event.timestamp >= $0 } ?? true) && (until.map { event.timestamp <= $0 } ?? true)
                && (origin == nil || (event.origin?.device ?? this) == origin)
        }
        let show = { (event: RecordedEvent) throws in
            let line = global.json ? try EventJSON(event).encodedLine() : Describe.line(event)
            // Unbuffered when following, so each event shows (or reaches a pipe) as it lands.
            if follow { FileHandle.standardOutput.write(Data((line + "\n").utf8)) } else { print(line) }
        }
        if pinID != nil {
            for event in aboutPin where wanted(event) { try show(event) }
        } else {
            try reader.forEachEvent(from: start, through: to) { if wanted($0) { try show($0) } }
        }
        guard follow else { return }
        // Every log of the store: this device's, and the copies a sync grows.
        var follower = StoreFollower(after: reader)
        try await follower.follow({ if wanted($0) { try show($0) } }) { late in
            Terminal.note("\(late) of these events arrived late: a sync brought them from before events already shown, whose positions moved up")
        }
    }
}

/// `vt show SEQ`: one event and the chain of events that led to it.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one event and its chain of causes (the events that led to it).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The event's sequence number.") var sequence: UInt64
    @OptionGroup var numbers: DeviceNumbers

    struct View: Encodable {
        var event: EventJSON
        var causes: [EventJSON]
        /// Whether the fold took the event, and why not when it did not.
        var folded: Bool
        var not_folded_because: String?
        /// The event that decided what became of this one, when another did.
        var decided_by: Decided?
        /// The event made at once on another device that gave way to this one, when one did.
        var overrode: Decided?
    }

    struct Decided: Encodable {
        var event: EventJSON
        var how: String
    }

    func run() async throws {
        let reader = try global.reader()
        let chain = try reader.causes(of: try numbers.position(sequence, reader: reader, store: global.storePath))
        let verdict = try reader.verdict(of: chain[0])
        let why: String? = switch verdict {
        case .folded: nil
        case .passedOver(let problem): "the rules passed over it: \(problem.message)"
        case .anotherDevicesView: "another device's view of the map: kept in its log, never merged (each device opens where it was)"
        }
        let decided = try reader.decidingEvent(for: chain[0], verdict: verdict)
        let overrode = try reader.overriddenEvent(for: chain[0], verdict: verdict)
        if global.json {
            return try Output.json(
                View(
                    event: EventJSON(chain[0]), causes: chain.dropFirst().map(EventJSON.init), folded: why == nil, not_folded_because: why,
                    decided_by: decided.map { Decided(event: EventJSON($0.event), how: $0.how) },
                    overrode: overrode.map { Decided(event: EventJSON($0.event), how: $0.how) }))
        }
        print(Describe.line(chain[0]))
        if let why { print(Terminal.styled("not folded: ", .yellow) + why) }
        if let decided { print(Terminal.styled("decided by: ", .yellow) + Describe.line(decided.event) + " — " + decided.how) }
        if let overrode { print(Terminal.styled("overrode: ", .yellow) + Describe.line(overrode.event) + " — " + overrode.how) }
        if case .photosListed(let listing) = chain[0].event {
            for (slot, photo) in listing.photos.enumerated() { print("        \(slot)  \(photo.remoteID)  \(photo.title.prefix(60))") }
        }
        if chain.count > 1 {
            print("caused by:")
            for cause in chain.dropFirst() { print(Describe.line(cause)) }
        } else {
            print("(a person's action: no event caused it)")
        }
    }
}

/// `vt history PIN`: everything that happened to one pin.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Every event about one pin, oldest first (removed pins too).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pin's id, or a unique prefix of it.") var pin: String
    @Option(help: ArgumentHelp("Only the events of this device: its id, a unique prefix of it, or its name (vt device lists them).", valueName: "DEVICE"))
    var device: String?

    func run() async throws {
        let reader = try global.reader()
        // A store of one device writes no origins: its events are all this device's.
        let origin = try device.map { try DeviceArgument.resolve($0, store: global.storePath) }
        let this = origin == nil ? nil : try StoreSync.devices(of: global.storePath).this.device
        for event in try reader.history(matching: pin).events where origin == nil || (event.origin?.device ?? this) == origin {
            if global.json { print(try EventJSON(event).encodedLine()) } else { print(Describe.line(event)) }
        }
    }
}

/// `vt stats`: what the store holds and how big it is.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Events by type, the log's format and bytes (blocks and hot tail apart), compression, photos and snapshots.")
    @OptionGroup var global: GlobalOptions

    struct View: Encodable {
        var events: UInt64
        var events_by_type: [String: UInt64]
        var format: Int
        var segments: Int
        var batches: Int
        var blocks: Int
        var records: Int
        var block_bytes: Int64
        var hot_tail_bytes: Int64
        var log_bytes: Int64
        var raw_event_bytes: Int64
        var index_bytes: Int64
        var compression_ratio: Double
        var bytes_per_event: Double
        var pins: Int
        var photos_shown: Int
        var blobs: Int
        var blob_bytes: Int64
        var referenced_blobs: Int
        var snapshots: [UInt64]
        var snapshot_bytes: Int64
        var first_time: String?
        var last_time: String?
        var format1_log_bytes: Int64?
    }

    func run() async throws {
        let bar = ProgressBar()
        let stats = try StoreAudit.statistics(of: try global.reader()) { bar.update($0, done: $1, total: $2) }
        bar.finish()
        let perEvent = stats.events > 0 ? Double(stats.storedBytes) / Double(stats.events) : 0
        if global.json {
            return try Output.json(View(
                events: stats.events, events_by_type: stats.eventsByType, format: stats.format.rawValue,
                segments: stats.segments, batches: stats.batches, blocks: stats.blocks, records: stats.records,
                block_bytes: stats.blockBytes, hot_tail_bytes: stats.tailBytes,
                log_bytes: stats.storedBytes, raw_event_bytes: stats.rawBytes, index_bytes: stats.indexBytes,
                compression_ratio: (stats.compressionRatio * 100).rounded() / 100, bytes_per_event: (perEvent * 10).rounded() / 10,
                pins: stats.pins, photos_shown: stats.photosShown, blobs: stats.blobs, blob_bytes: stats.blobBytes,
                referenced_blobs: stats.referencedBlobs, snapshots: stats.snapshots, snapshot_bytes: stats.snapshotBytes,
                first_time: stats.firstTime?.description, last_time: stats.lastTime?.description,
                format1_log_bytes: stats.formerLogBytes))
        }
        print("events: \(stats.events)" + (stats.firstTime.map { " (\($0) … \(stats.lastTime!))" } ?? ""))
        for name in DomainEvent.typeNames { if let count = stats.eventsByType[name] { print("  \(name.padding(toLength: 20, withPad: " ", startingAt: 0))\(count)") } }
        if stats.format == .v2 {
            print("log (format 2): \(stats.storedBytes) bytes (\(String(format: "%.1f", perEvent)) per event): sealed blocks"
                + " \(stats.blockBytes) bytes in \(stats.blocks) block\(stats.blocks == 1 ? "" : "s"), hot tail \(stats.tailBytes) bytes"
                + " in \(stats.records) record\(stats.records == 1 ? "" : "s") and \(stats.segments) segment\(stats.segments == 1 ? "" : "s");"
                + " events \(stats.rawBytes) bytes before compression, ratio \(String(format: "%.2f", stats.compressionRatio))")
        } else {
            print("log (format 1): \(stats.segments) segment\(stats.segments == 1 ? "" : "s"), \(stats.batches) batches, \(stats.storedBytes) bytes"
                + " (\(String(format: "%.1f", perEvent)) per event); events \(stats.rawBytes) bytes before compression,"
                + " ratio \(String(format: "%.2f", stats.compressionRatio)); indexes \(stats.indexBytes) bytes")
        }
        if let bytes = stats.formerLogBytes {
            print("log.format1/: \(bytes) bytes, the format-1 log kept by `vt upgrade`; remove it once you no longer need it")
        }
        print("map: \(stats.pins) pins, \(stats.photosShown) photos in albums")
        print("photos stored: \(stats.blobs) files, \(stats.blobBytes) bytes; \(stats.referencedBlobs) shown in albums, \(stats.blobs - min(stats.blobs, stats.referencedBlobs)) kept for time travel or awaiting collection")
        print("snapshots: \(stats.snapshots.count)" + (stats.snapshots.last.map { ", newest at event \($0)" } ?? "") + ", \(stats.snapshotBytes) bytes")
    }
}
