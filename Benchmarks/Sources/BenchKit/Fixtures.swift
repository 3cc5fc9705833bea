import EventLog
import Foundation
import SeededRandom
import TouristWorkload
import VirtualTourist

/// Ready-made inputs for the Benchmark suite: the workload's events encoded for our log and for
/// the SQLite peer, and logs already written.
public enum Fixtures {
    /// The first `count` events of the seeded workload, one by one.
    public static func events(_ count: Int, seed: UInt64 = 2026) -> [DomainEvent] {
        var workload = Workload(seed: seed)
        var events: [DomainEvent] = []
        workload.produce(atLeast: count) { events += $0 }
        return Array(events.prefix(count))
    }

    /// A log of the first `count` workload events in batches of a session, durability `.none`;
    /// returns the state they fold to.
    @discardableResult
    public static func writeLog(at path: String, events count: Int, seed: UInt64 = 2026) throws -> TouristState {
        var configuration = LogConfiguration()
        configuration.payloadCodec = EventCodec.blockCodec
        configuration.durability = .none
        let log = try EventLog.open(at: path, configuration: configuration)
        var workload = Workload(seed: seed)
        while workload.events < count {
            let session = workload.nextSession().flatMap { $0 }
            _ = try log.append(contentsOf: session.map { EventCodec.encode($0, cause: nil) })
        }
        try log.close()
        return workload.state
    }

    /// Replays `path` (read, check, decompress, decode, fold).
    public static func replay(_ path: String) throws -> TouristState {
        let cursor = try LogReader(directory: path, payloadCodec: EventCodec.blockCodec).events()
        var state = TouristState()
        while let event = try cursor.next() { state.apply(try EventCodec.decode(event)) }
        return state
    }

    /// Photo-like bytes: a JPEG's first four bytes, then seeded random ones (they do not
    /// compress, as real photos barely do).
    public static func photo(seed: UInt64, size: Int) -> [UInt8] {
        var random = SplitMix(seed: seed)
        return [0xFF, 0xD8, 0xFF, 0xE0] + (0..<max(0, size - 4)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }
}
