import BenchKit
import Foundation
import VirtualTourist

/// The store's whole commit path, from an action to `fdatasync`: callers in tasks of their own
/// each run actions one after another through `TouristStore` (durability `.always`), checked,
/// numbered, timed, encoded, written and synced, the state published before each returns. The
/// log's own appends (AppendCases) leave out everything above the log.
struct ActionCases {
    let options: Options
    let report: Report

    func run() async throws {
        report.section("durable actions through the store (from the action to fdatasync)")
        for callers in [1, 8, 32] {
            let actions = callers * options.eventsPerWriter
            var best = Double.infinity
            for _ in 0..<options.repeats { best = min(best, try await runActions(callers: callers)) }
            report.add(Row(
                what: "durable actions, \(callers) concurrent caller\(callers == 1 ? "" : "s") (one event each)",
                ours: perSecond(Double(actions) / best)))
        }
    }

    /// Runs `eventsPerWriter` region changes from each of `callers` tasks on a new store;
    /// returns the seconds.
    private func runActions(callers: Int) async throws -> Double {
        let folder = Measure.temporaryFolder("actions")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = StoreOptions()
        settings.collectionInterval = nil
        settings.log.durability = .always
        let store = try await TouristStore.open(at: folder, options: settings)
        let perCaller = options.eventsPerWriter
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in 0..<perCaller {
                        let latitude = Double((caller * perCaller + index) % 160) - 80
                        _ = try await store.changeRegion(
                            to: MapRegion(center: Coordinate(latitude: latitude, longitude: 10), latitudeSpan: 1, longitudeSpan: 1))
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = Measure.seconds(since: start)
        precondition(store.lastSequence == UInt64(callers * perCaller), "every action was recorded")
        try await store.close()
        return seconds
    }
}
