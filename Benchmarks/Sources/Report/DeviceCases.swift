import BenchKit
import EventLog
import Foundation
import TouristWorkload
import VirtualTourist

/// Several devices of one map (docs/DEVICES.md, "Targets"): `vt sync` copying the workload into
/// a new device, what a copy costs on disk beyond the log it copies, and a device that comes
/// back after a month (its own events against the other's) synced and opened.
struct DeviceCases {
    let options: Options
    let report: Report

    func run() async throws {
        report.section("devices: sync, what a copy costs, a device back after 30 days")
        let base = Measure.temporaryFolder("devices")
        defer { try? FileManager.default.removeItem(atPath: base) }
        let phone = base + "/phone", laptop = base + "/laptop"
        // The laptop is cloned while the phone is new; then the phone writes the workload.
        let phoneWriter = try StoreWriter(folder: phone, interval: options.snapshotInterval, seed: options.seed)
        let storeOptions = phoneWriter.storeOptions
        try await TouristStore.open(at: phone, options: storeOptions).close()
        _ = try StoreSync.clone(from: phone, to: laptop, name: "laptop", options: storeOptions)
        try await phoneWriter.write(upTo: options.events)
        try phoneWriter.letCompactionCatchUp()

        let events = phoneWriter.workload.events
        var taken: UInt64 = 0
        let seconds = try Measure.seconds { taken = try StoreSync.sync(store: laptop, with: phone, options: storeOptions).eventsTaken }
        precondition(taken == UInt64(events), "the sync took \(taken) of \(events) events")
        let rate = Double(events) / seconds
        report.add(Row(
            what: "vt sync: \(Figure.grouped(Double(events))) events into a new device", ours: perSecond(rate) + " (\(Figure.milliseconds(seconds)))",
            target: "≥ 500,000/s", verdict: Target.atLeast(rate, 500_000)))

        // Events carry nothing for the merge (the device is the log's, the time the log's own):
        // what names a device is its device.json, once.
        let names = Self.bytes(under: laptop, endingWith: "device.json")
        let metadata = Double(names) / Double(events)
        report.add(Row(
            what: "merge metadata per event (every device.json over the events)", ours: Figure.fixed(metadata, 3) + " B",
            target: "≤ 4 B", verdict: Target.atMost(metadata, 4)))
        let copyBytes = Self.bytes(under: laptop + "/devices", endingWith: ".blk")
        report.note(
            "the laptop's copy holds \(Figure.grouped(Double(events))) events in \(Figure.mebibytes(Double(copyBytes))) of block files, \(Figure.fixed(Double(copyBytes) / Double(events))) B an event (the phone's block files taken whole, its hot tail encoded)")

        // A month apart: the laptop writes its own events, the phone ten times as many.
        let own = max(options.events / 100, 100), others = max(options.events / 10, 1_000)
        let laptopWriter = try StoreWriter(folder: laptop, interval: options.snapshotInterval, seed: options.seed &+ 1)
        try await laptopWriter.write(upTo: own)
        try await phoneWriter.write(upTo: events + others)
        try phoneWriter.letCompactionCatchUp()
        var back: (taken: UInt64, given: UInt64) = (0, 0)
        let syncSeconds = try Measure.seconds {
            let synced = try StoreSync.sync(store: laptop, with: phone, options: storeOptions)
            back = (synced.eventsTaken, synced.eventsGiven)
        }
        precondition(back.given == UInt64(laptopWriter.workload.events), "the laptop gave \(back.given) events")
        let start = ContinuousClock.now
        let reopened = try await TouristStore.open(at: laptop, options: storeOptions)
        let openSeconds = Measure.seconds(since: start)
        let total = reopened.state.sequence
        let refolded = reopened.report.replayedEvents
        try await reopened.close()
        let named = "\(Figure.grouped(Double(back.given))) own events vs \(Figure.grouped(Double(back.taken))) of the other's"
        let atTarget = others == 100_000 && own == 10_000
        report.add(Row(what: "a device back after 30 days (\(named)): sync", ours: Figure.milliseconds(syncSeconds)))
        report.add(Row(
            what: "… then open (\(Figure.grouped(Double(total))) events, \(Figure.grouped(Double(refolded))) of them folded after the snapshot it starts from)",
            ours: Figure.milliseconds(openSeconds),
            target: atTarget ? "sync and open < 1 s" : "", verdict: atTarget ? Target.atMost(syncSeconds + openSeconds, 1) : nil))

        // What a device had seen: the laptop's next action, through the store's commit path,
        // begins its record with a DeviceSeen of the phone (docs/DEVICES.md).
        let acting = try await TouristStore.open(at: laptop, options: storeOptions)
        _ = try await acting.changeRegion(to: MapRegion(center: Coordinate(latitude: 45, longitude: 7), latitudeSpan: 1, longitudeSpan: 1))
        try await acting.close()
        let seen = try Self.deviceSeenPayloads(inLog: laptop + "/log")
        precondition(seen.count == 1, "the laptop's action wrote \(seen.count) DeviceSeen events")
        // The most a device writes: one in every session (two devices taking turns, a sync
        // between each), each session as long as the workload's on average.
        var sample = Workload(seed: options.seed, livePins: 1_000)
        var sessions = 0
        while sample.events < 100_000 {
            _ = sample.nextSession()
            sessions += 1
        }
        let perSession = Double(sample.events) / Double(sessions)
        let worst = metadata + Double(seen.bytes) / perSession
        report.add(Row(
            what: "… with a DeviceSeen (\(seen.bytes) B encoded) beginning every session (\(Figure.fixed(perSession, 1)) events on average)",
            ours: Figure.fixed(worst, 3) + " B", target: "≤ 4 B", verdict: Target.atMost(worst, 4)))
    }

    /// How many `DeviceSeen` events the log at `path` holds, and their payloads' bytes.
    static func deviceSeenPayloads(inLog path: String) throws -> (count: Int, bytes: Int) {
        let cursor = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).events(from: 1)
        var found = (count: 0, bytes: 0)
        while let event = try cursor.next() {
            guard case .deviceSeen = try EventCodec.decode(event).event else { continue }
            found.count += 1
            found.bytes += event.payload.count
        }
        return found
    }

    /// Bytes of the files under `path` whose names end with `suffix`.
    static func bytes(under path: String, endingWith suffix: String) -> Int64 {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let name = walker.nextObject() as? String {
            guard name.hasSuffix(suffix) else { continue }
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}
