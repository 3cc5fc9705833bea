import BenchKit
import BlobStore
import EventLog
import Foundation
import Replication
import Synchronization
import TouristWorkload
import VirtualTourist

/// Photos with bytes for the workload's downloads. The workload's digests are random values, so
/// each is mapped to the SHA-256 of a small JPEG-signed image made from it; a store written with
/// ``mapped(_:)`` names photos whose bytes can be stored, shipped and checked.
///
/// ```swift
/// writer.transform = BenchPhotos.mapped
/// let lease = try blobs.put(BenchPhotos.image(for: workloadDigest))   // lease.digest is the mapped one
/// ```
enum BenchPhotos {
    /// Bytes an image: small, so that the run measures messages, not the disk's bandwidth.
    static let size = 2_048

    /// The image behind a workload digest: a JPEG's first four bytes, then the digest repeated.
    static func image(for digest: PhotoDigest) -> [UInt8] {
        let seed = digest.bytes
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
        bytes.reserveCapacity(size + seed.count)
        while bytes.count < size { bytes += seed }
        return Array(bytes.prefix(size))
    }

    /// A download names the digest of its image; every other event is left as it is.
    static func mapped(_ event: DomainEvent) -> DomainEvent {
        guard case .photoDownloaded(var photo) = event else { return event }
        let image = image(for: photo.digest)
        photo.digest = PhotoDigest.of(image)
        photo.byteCount = UInt64(image.count)
        return .photoDownloaded(photo)
    }

    /// A store of the workload's first `count` events (whole sessions), with a snapshot every
    /// 10,000 events, compacted, and with `photos` the images of every photo its last state
    /// shows. Photos dropped earlier have no bytes, as in a store whose collection ran.
    static func writeStore(at folder: String, events count: Int, seed: UInt64, photos: Bool) async throws -> (events: Int, photos: Int) {
        let writer = try StoreWriter(folder: folder, interval: 10_000, seed: seed)
        writer.transform = mapped
        try await writer.write(upTo: count)
        let blobs = try BlobStore(directory: folder + "/blobs")
        let digests = photos ? writer.workload.state.referencedDigests : []
        for digest in digests { try blobs.put(image(for: digest)).release() }
        let store = try await TouristStore.open(at: folder, options: writer.storeOptions)
        _ = try store.compactLog()
        try await store.close()
        return (writer.workload.events, digests.count)
    }
}

/// When each event was committed, by sequence number, for the lag from commit to acknowledgement.
final class CommitLedger: Sendable {
    private let times: Mutex<[ContinuousClock.Instant?]>

    init(capacity: Int) { times = Mutex(Array(repeating: nil, count: capacity + 1)) }

    func committed(_ sequence: UInt64, at time: ContinuousClock.Instant) {
        times.withLock { if Int(sequence) < $0.count { $0[Int(sequence)] = time } }
    }

    /// The seconds from each commit in `range` to `time` (events not recorded are skipped).
    func lags(_ range: ClosedRange<UInt64>, at time: ContinuousClock.Instant) -> [Double] {
        times.withLock { times in
            range.compactMap { Int($0) < times.count ? times[Int($0)].map { (time - $0) / .seconds(1) } : nil }
        }
    }
}

/// The last event the app committed, once it has stopped.
final class Finished: Sendable {
    private let value = Mutex<UInt64?>(nil)
    func set(_ last: UInt64) { value.withLock { $0 = last } }
    func last() -> UInt64? { value.withLock { $0 } }
}

/// The app's durable commits through the real store, one event each; a download stores its
/// image first (`storePhoto`, then `recordDownload`), as the album pipeline does.
struct CommitRun {
    /// Each commit's wait, in seconds.
    var latencies: [Double] = []
    var seconds = 0.0
    /// CPU the whole process used meanwhile (user and system, every thread: a replicator in the
    /// process included).
    var processorSeconds = 0.0
    var events: Int { latencies.count }
    var rate: Double { seconds > 0 ? Double(events) / seconds : 0 }
    /// The process's CPU a commit, in seconds.
    var processorPerEvent: Double { events > 0 ? processorSeconds / Double(events) : 0 }

    mutating func add(_ other: CommitRun) {
        latencies += other.latencies
        seconds += other.seconds
        processorSeconds += other.processorSeconds
    }

    /// Commits `events` to `store`, paced at `rate` events a second (catching up without sleep
    /// when behind) or back to back when `rate` is nil. Up to `downloadsAtOnce` downloads are
    /// committed at once, as the album pipeline downloads an album's photos (their commits share
    /// an fsync); any other event waits for the downloads before it and is committed before the
    /// next event starts, so every event still finds what it builds on.
    static func commit(
        _ events: [DomainEvent], to store: TouristStore, rate: Double? = nil, ledger: CommitLedger? = nil, downloadsAtOnce: Int = 1
    ) async throws -> CommitRun {
        var run = CommitRun()
        run.latencies.reserveCapacity(events.count)
        let start = ContinuousClock.now
        let processorBefore = Measure.processorSeconds()
        func pace(_ index: Int) async throws {
            guard let rate else { return }
            let due = start + .seconds(Double(index) / rate)
            if due > .now { try await Task.sleep(until: due, clock: .continuous) }
        }
        if downloadsAtOnce <= 1 {
            for (index, event) in events.enumerated() {
                try await pace(index)
                run.latencies.append(try await commitOne(event, to: store, ledger: ledger))
            }
        } else {
            try await withThrowingTaskGroup(of: Double.self) { group in
                var inFlight = 0
                for (index, event) in events.enumerated() {
                    let download = if case .photoDownloaded = event { true } else { false }
                    while inFlight > 0 && (!download || inFlight >= downloadsAtOnce), let latency = try await group.next() {
                        run.latencies.append(latency)
                        inFlight -= 1
                    }
                    try await pace(index)
                    guard download else {
                        // Committed before the next event starts: the downloads after it build on it.
                        run.latencies.append(try await commitOne(event, to: store, ledger: ledger))
                        continue
                    }
                    group.addTask { try await commitOne(event, to: store, ledger: ledger) }
                    inFlight += 1
                }
                while let latency = try await group.next() { run.latencies.append(latency) }
            }
        }
        run.seconds = (ContinuousClock.now - start) / .seconds(1)
        run.processorSeconds = Measure.processorSeconds() - processorBefore
        return run
    }

    /// One event's durable commit; its wait in seconds.
    private static func commitOne(_ event: DomainEvent, to store: TouristStore, ledger: CommitLedger?) async throws -> Double {
        let before = ContinuousClock.now
        let recorded: RecordedEvent
        if case .photoDownloaded(let photo) = event {
            // As the app does: the image durably stored first, then the event naming it.
            let lease = try store.storePhoto(BenchPhotos.image(for: photo.digest))
            recorded = try await store.recordDownload(lease, pin: photo.pin, collection: photo.collection, slot: photo.slot, cause: nil)
        } else {
            recorded = try await store.record(event)
        }
        let after = ContinuousClock.now
        ledger?.committed(recorded.sequence, at: after)
        return (after - before) / .seconds(1)
    }
}

/// Samples a running replicator beside the app: how many committed events the cluster has not
/// acknowledged, and for each event how long from its commit until an acknowledgement covered it.
struct LagSampler {
    var lagEvents: [Double] = []
    var lagSeconds: [Double] = []
    var samples: Int { lagEvents.count }
    /// Events still not acknowledged when the wait after the app stopped ran out (0: drained).
    var undrained: UInt64 = 0
    /// From the app's last commit until the cluster acknowledged it.
    var drainSeconds = 0.0

    /// Samples every `interval` until `done` names the app's last event and it is acknowledged,
    /// or `timeout` passes after that (then ``undrained`` says how many were left).
    static func sample(
        _ replicator: Replicator, store: TouristStore, ledger: CommitLedger, interval: Duration = .milliseconds(5),
        done: @Sendable () -> UInt64?, timeout: Duration = .seconds(120)
    ) async throws -> LagSampler {
        var sampler = LagSampler()
        var acknowledged = replicator.acknowledgedEvents
        var deadline: ContinuousClock.Instant? = nil
        while true {
            try await Task.sleep(for: interval)
            let committed = store.lastSequence
            let now = ContinuousClock.now
            let ack = replicator.acknowledgedEvents
            sampler.lagEvents.append(Double(committed - min(committed, ack)))
            if ack > acknowledged {
                sampler.lagSeconds += ledger.lags((acknowledged + 1)...ack, at: now)
                acknowledged = ack
            }
            guard let last = done() else { continue }
            let end = deadline ?? now + timeout
            deadline = end
            if ack >= last || now > end {
                sampler.undrained = last - min(last, ack)
                sampler.drainSeconds = (now - (end - timeout)) / .seconds(1)
                return sampler
            }
        }
    }
}

/// Median, 99th percentile and maximum of a list of figures.
struct Spread {
    var median = 0.0
    var p99 = 0.0
    var max = 0.0

    init(_ values: [Double]) {
        guard !values.isEmpty else { return }
        let sorted = values.sorted()
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))] }
        median = at(0.5)
        p99 = at(0.99)
        max = sorted[sorted.count - 1]
    }

    /// Seconds as durations: milliseconds below one second.
    func durations() -> String { [median, p99, max].map(Self.duration).joined(separator: " / ") }

    static func duration(_ seconds: Double) -> String { seconds < 1 ? Figure.milliseconds(seconds) : Figure.fixed(seconds, 1) + " s" }

    func whole() -> String {
        [median, p99, max].map { Figure.grouped($0) }.joined(separator: " / ")
    }
}

/// A measurement that could not be made (the cluster fell behind for good, a restore that does
/// not match its source): the run stops instead of printing a figure.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
