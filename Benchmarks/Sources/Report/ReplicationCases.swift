import BenchKit
import EventLog
import Foundation
import NATSClient
import Replication
import TouristWorkload
import VirtualTourist

/// `vt-bench replication --nats URLS`: issue 21's targets, measured against a real JetStream
/// cluster (Benchmarks/scripts/replication starts one of three servers and runs this):
///
/// 1. lag: the app commits N events a second through `TouristStore` while a `Replicator` runs
///    beside it; the lag from commit to the cluster's acknowledgement, in events and in seconds;
/// 2. catch-up: a store of `--events` events, none shipped, then `shipAvailable`, events/s;
/// 3. restore: `StreamRestore.restore` of that stream; then both again on a smaller store with
///    its photos (`--photo-events`), for the photos' rates;
/// 4. commit: durable commits back to back, alternately with and without a replicator running;
/// 5. rewrite: a store of `--events` shipped whole, one place forgotten, the stream rewritten;
///    then the same on the store of `--photo-events` with its photos in the bucket.
///
/// The table is the harness's own, with the target and its verdict on each measured row.
struct ReplicationCases {
    static let groups = ["lag", "commit", "backlog", "rewrite", "sync"]
    static let usage = """
        usage: vt-bench replication --nats URLS [--events N] [--photo-events N] [--rate N] [--seconds N] [--downloads N]
                                   [--commits N] [--catch-up N] [--growing] [--only lag,commit,backlog,rewrite,sync] [--smoke] [--seed N] [--json]
        Measures replication into a JetStream cluster (use three servers: Benchmarks/scripts/replication starts them):
          lag      the app commits --rate events/s (1000) for --seconds (30), --downloads (6) at once as the album
                   pipeline downloads, while a Replicator runs; lag in events and seconds
          commit   --commits (5000) durable commits back to back each way, with and without a Replicator, in 4 rounds of half as many
          backlog  a store of --events (1m) events, none shipped, its photos' bytes left out: shipAvailable, then a restore;
                   then a store of --photo-events (20k) with its photos: shipAvailable, then a restore
          rewrite  a store of --events shipped, one place forgotten: the rewrite of the stream, then a compare alone;
                   then the same on a store of --photo-events with its photos
          sync     three devices syncing live through the cluster: pins dropped at --rate in all for --seconds, the lag
                   until each other device shows each; a device offline while the others wrote --catch-up (100k) events,
                   synced once; durable commits with and without its sync running (docs/SYNC.md); with --growing
                   the map in the lag case only grows (every action a new pin) instead of keeping about 1,000 pins
        --smoke: 5,000 and 500 events, 1 s at the rate, 100 commits, a catch-up of 2,000 (CI).
        """

    var urls = ""
    var events = 1_000_000
    var rate = 1_000.0
    var seconds = 30.0
    /// Downloads committed at once in the lag case: the album pipeline's default.
    var downloads = 6
    var commits = 5_000
    var photoEvents = 20_000
    /// Events the other devices write while one is offline, in the sync case.
    var catchUp = 100_000
    /// The sync lag case's map only grows instead of keeping about 1,000 pins.
    var growing = false
    var seed: UInt64 = 2026
    var json = false
    var groups = Set(ReplicationCases.groups)
    let report = Report()

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return next
        }
        func number(_ flag: String, _ range: ClosedRange<Double>) throws -> Double {
            let text = try value(flag)
            guard let parsed = WorkloadSize.parse(text).map(Double.init) ?? Double(text), range.contains(parsed) else {
                throw UsageError("\(flag) takes a number from \(Figure.grouped(range.lowerBound)) to \(Figure.grouped(range.upperBound)), not \(text)")
            }
            return parsed
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--nats": urls = try value(argument)
            case "--events": events = Int(try number(argument, 1_000...20_000_000))
            case "--rate": rate = try number(argument, 1...100_000)
            case "--seconds": seconds = try number(argument, 1...3_600)
            case "--downloads": downloads = Int(try number(argument, 1...64))
            case "--commits": commits = Int(try number(argument, 10...1_000_000))
            case "--photo-events": photoEvents = Int(try number(argument, 1_000...20_000_000))
            case "--catch-up": catchUp = Int(try number(argument, 1_000...10_000_000))
            case "--seed": seed = UInt64(try number(argument, 0...1e15))
            case "--json": json = true
            case "--growing": growing = true
            case "--smoke":
                events = 5_000
                photoEvents = 500
                seconds = 1
                commits = 100
                catchUp = 2_000
            case "--only":
                let names = try value(argument).split(separator: ",").map(String.init)
                guard !names.isEmpty, names.allSatisfy(ReplicationCases.groups.contains) else {
                    throw UsageError("--only takes \(ReplicationCases.groups.joined(separator: ", ")), not \(names.joined(separator: ","))")
                }
                groups = Set(names)
            case "--help", "-h":
                print(ReplicationCases.usage)
                exit(0)
            default: throw UsageError("unknown argument \(argument)\n\(ReplicationCases.usage)")
            }
        }
        guard !urls.isEmpty else { throw UsageError("--nats URLS is needed (a cluster's client URLs, comma-separated)\n\(ReplicationCases.usage)") }
    }

    func run() async throws {
        let started = ContinuousClock.now
        let nats = try await NATSConnection.connect(urls)
        say("vt-bench replication: cluster \(urls); \(Figure.grouped(rate)) events/s for \(Figure.fixed(seconds, 0)) s,"
            + " \(Figure.grouped(Double(commits))) commits, a store of \(WorkloadSize.name(events)) events, seed \(seed)")
        do {
            if groups.contains("lag") { try await lag(nats) }
            if groups.contains("commit") { try await commitComparison(nats) }
            if groups.contains("backlog") { try await backlogAndRestore(nats) }
            if groups.contains("rewrite") { try await rewriteAfterForget(nats) }
            if groups.contains("sync") { try await syncCases() }
        } catch {
            await nats.close()
            throw error
        }
        await nats.close()
        let elapsed = Measure.seconds(since: started)
        if json {
            print(try report.json(workload: WorkloadSize.name(events), events: events, seed: seed, seconds: elapsed))
        } else {
            print("Replication into \(urls); \(Figure.fixed(elapsed, 0)) s in all.\n")
            print(report.markdown(peer: "without replication", ratio: "with vs without"))
        }
    }

    // MARK: 1. Lag at the app's rate

    private func lag(_ nats: NATSConnection) async throws {
        let count = Int(rate * seconds)
        report.section("the app at \(Figure.grouped(rate)) events/s, \(downloads) downloads at once, for \(Figure.fixed(seconds, 0)) s, without then with a replicator")
        let events = Fixtures.events(count + 1, seed: seed)
        let alone = try await withStore("paced") { store, _ in
            _ = try await store.record(events[0])
            return try await CommitRun.commit(Array(events.dropFirst()), to: store, rate: rate, downloadsAtOnce: downloads)
        }
        var sampler = LagSampler()
        let replicated = try await withStore("lag") { store, folder in
            _ = try await store.record(events[0])
            let (replicator, shipping) = try await startShipping(folder, nats)
            let ledger = CommitLedger(capacity: count + 1)
            let finished = Finished()
            let sampling = Task { try await LagSampler.sample(replicator, store: store, ledger: ledger, done: { finished.last() }) }
            let run = try await CommitRun.commit(Array(events.dropFirst()), to: store, rate: rate, ledger: ledger, downloadsAtOnce: downloads)
            finished.set(store.lastSequence)
            sampler = try await sampling.value
            shipping.cancel()
            try await shipping.value
            return run
        }
        let lagSeconds = Spread(sampler.lagSeconds)
        report.add(Row(
            what: "the app: durable commits through TouristStore, one event each (a download stores its image first; up to \(downloads) downloads at once), paced at \(Figure.grouped(rate))/s",
            ours: "\(Figure.grouped(Double(replicated.events))) in \(Figure.fixed(replicated.seconds, 1)) s (\(perSecond(replicated.rate)))",
            peer: "\(Figure.grouped(Double(alone.events))) in \(Figure.fixed(alone.seconds, 1)) s (\(perSecond(alone.rate)))"))
        report.add(Row(
            what: "replication lag in events (committed, not yet acknowledged; \(Figure.grouped(Double(sampler.samples))) samples 5 ms apart): median / p99 / max",
            ours: Spread(sampler.lagEvents).whole()))
        let undrained = sampler.undrained == 0 ? "" : "; \(Figure.grouped(Double(sampler.undrained))) events still unacknowledged"
        // Judged only when the app kept the target's rate: a lag at a lower rate says nothing of 1,000/s.
        let verdict: Row.Verdict? =
            rate < 1_000 ? nil
            : sampler.undrained > 0 || lagSeconds.max > 1 ? .missed
            : replicated.rate < 0.95 * 1_000 ? .notReached : .met
        let reached = verdict == .notReached ? " (the app made only \(perSecond(replicated.rate)))" : ""
        report.add(Row(
            what: "replication lag in seconds, each event from its commit to the acknowledgement that covered it: median / p99 / max",
            ours: lagSeconds.durations() + undrained + reached, target: "< 1 s at 1,000 events/s sustained", verdict: verdict))
        report.add(Row(
            what: "… from the app's last commit until the cluster acknowledged it",
            ours: sampler.undrained == 0 ? Spread.duration(sampler.drainSeconds) : "not within \(Figure.fixed(sampler.drainSeconds, 0)) s"))
        commitRows("the app's commit latency at \(Figure.grouped(rate))/s", with: replicated, without: alone, target: false)
    }

    // MARK: 4. Durable commits with and without a replicator

    private func commitComparison(_ nats: NATSConnection) async throws {
        // The disk's fsync times drift over minutes; four rounds of half the commits, the order
        // swapped every round (without-with, with-without, …), keep the drift out of the ratio.
        let rounds = 4
        let perRound = max(2, commits / 2)
        report.section("\(Figure.grouped(Double(perRound * rounds))) durable commits back to back each way, with and without a replicator, in \(rounds) rounds")
        let events = Fixtures.events(perRound, seed: seed)
        var with = CommitRun()
        var without = CommitRun()
        for round in 1...rounds {
            var plain = CommitRun()
            var shipped = CommitRun()
            for replicated in round % 2 == 1 ? [false, true] : [true, false] {
                if replicated { shipped = try await replicatedCommits(events, nats) } else { plain = try await plainCommits(events) }
            }
            say("round \(round): without \(perSecond(plain.rate)), with \(perSecond(shipped.rate))")
            without.add(plain)
            with.add(shipped)
        }
        commitRows("durable commits back to back", with: with, without: without, target: true)
        report.add(Row(
            what: "durable commits back to back: the process's CPU a commit (the app's, and with replication its replicator's)",
            ours: Figure.milliseconds(with.processorPerEvent), peer: Figure.milliseconds(without.processorPerEvent),
            ratio: costRatio(with.processorPerEvent, without.processorPerEvent)))
    }

    private func plainCommits(_ events: [DomainEvent]) async throws -> CommitRun {
        try await withStore("commit") { store, _ in
            _ = try await store.record(events[0])
            return try await CommitRun.commit(Array(events.dropFirst()), to: store)
        }
    }

    private func replicatedCommits(_ events: [DomainEvent], _ nats: NATSConnection) async throws -> CommitRun {
        try await withStore("commit-replicated") { store, folder in
            _ = try await store.record(events[0])
            let (_, shipping) = try await startShipping(folder, nats)
            let run = try await CommitRun.commit(Array(events.dropFirst()), to: store)
            shipping.cancel()
            try await shipping.value
            return run
        }
    }

    /// A replicator running beside the app at background priority, as `vt serve --replicate`
    /// runs it; cancel the task to stop it.
    private func startShipping(_ folder: String, _ nats: NATSConnection) async throws -> (Replicator, Task<Void, any Error>) {
        let replicator = try await Replicator.start(store: folder, connection: nats, servers: urls)
        return (replicator, Task(priority: .background) { try await replicator.run() })
    }

    /// Latency (median, p99) and throughput, with a replicator beside those without.
    private func commitRows(_ what: String, with: CommitRun, without: CommitRun, target: Bool) {
        let a = Spread(with.latencies)
        let b = Spread(without.latencies)
        report.add(Row(
            what: "\(what): median latency", ours: Figure.milliseconds(a.median), peer: Figure.milliseconds(b.median),
            ratio: costRatio(a.median, b.median), target: target ? "no slower with replication (≥ 0.95×, within noise)" : "",
            verdict: target ? Target.atLeast(b.median / a.median, 0.95) : nil))
        report.add(Row(
            what: "\(what): p99 latency", ours: Figure.milliseconds(a.p99), peer: Figure.milliseconds(b.p99),
            ratio: costRatio(a.p99, b.p99), target: target ? "no slower with replication (≥ 0.95×)" : "",
            verdict: target ? Target.atLeast(b.p99 / a.p99, 0.95) : nil))
        if target {
            report.add(Row(
                what: "\(what): throughput (\(Figure.grouped(Double(with.events))) commits each way)", ours: perSecond(with.rate),
                peer: perSecond(without.rate), ratio: rateRatio(with.rate, without.rate), target: "no slower with replication (≥ 0.95×)",
                verdict: Target.atLeast(with.rate / without.rate, 0.95)))
        }
    }

    // MARK: 2 and 3. Catch-up of a backlog, and restore

    /// The events at `--events`, their photos' bytes left out (every photo counts as missing:
    /// at the photo rates measured here a 1 M-event store's 130,000 photos take many minutes);
    /// then a store of `--photo-events` with its photos, shipped and restored whole.
    private func backlogAndRestore(_ nats: NATSConnection) async throws {
        report.section("a store of \(WorkloadSize.name(events)) events, shipped after an outage, then restored")
        let root = Measure.temporaryFolder("replication")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let big = try await writeStore(root + "/events", events: events, photos: false)
        let eventsOnly = try await ship(big.folder, stream: "VTBENCH_EVENTS_\(UUID().uuidString.prefix(8))", nats)
        let rate = Double(eventsOnly.status.acknowledgedEvents) / eventsOnly.seconds
        report.add(Row(
            what: "backlog catch-up: \(Figure.grouped(Double(eventsOnly.status.acknowledgedEvents))) events, none shipped,"
                + " to 3 servers (shipAvailable; photos' bytes left out, \(Figure.grouped(Double(eventsOnly.status.photosMissing))) counted missing)",
            ours: perSecond(rate) + " (\(Figure.fixed(eventsOnly.seconds, 1)) s)", target: "≥ 50,000 events/s",
            verdict: Target.atLeast(rate, 50_000)))
        try await restore(eventsOnly.stream, of: big, into: root + "/events-restored", nats, target: true)
        try? FileManager.default.removeItem(atPath: root + "/events-restored")

        report.section("a store of \(WorkloadSize.name(photoEvents)) events with its photos, shipped, then restored")
        let small = try await writeStore(root + "/photos", events: photoEvents, photos: true)
        let full = try await ship(small.folder, stream: "VTBENCH_PHOTOS_\(UUID().uuidString.prefix(8))", nats)
        report.add(Row(
            what: "backlog catch-up with photos: \(Figure.grouped(Double(full.status.acknowledgedEvents))) events,"
                + " \(Figure.grouped(Double(full.status.photosUploaded))) photos uploaded (\(BenchPhotos.size) bytes each),"
                + " \(Figure.grouped(Double(full.status.photosMissing))) dropped before the outage",
            ours: perSecond(Double(full.status.acknowledgedEvents) / full.seconds) + " events, "
                + perSecond(Double(full.status.photosUploaded) / full.seconds) + " photos (\(Figure.fixed(full.seconds, 1)) s)"))
        try await restore(full.stream, of: small, into: root + "/photos-restored", nats, target: false)
    }

    // MARK: 5. A forget after shipping: the stream rewritten

    /// A store of `--events` shipped whole; one place forgotten in it; then the shipping of the
    /// forget, which rewrites the stream (read and compare, the safety copy, the stream again,
    /// the photos); then a rewrite asked for when nothing changed, which only compares.
    private func rewriteAfterForget(_ nats: NATSConnection) async throws {
        try await rewriteAfterForget(events: events, photos: false, nats)
        try await rewriteAfterForget(events: photoEvents, photos: true, nats)
    }

    /// The rewrite on one store: `photos` ships its photos' bytes too, so the photos step lists
    /// a bucket of that many objects and deletes the forgotten place's.
    private func rewriteAfterForget(events count: Int, photos: Bool, _ nats: NATSConnection) async throws {
        report.section("a store of \(WorkloadSize.name(count)) events\(photos ? " with its photos" : "") shipped, then one place forgotten")
        let root = Measure.temporaryFolder("rewrite")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let big = try await writeStore(root + "/events", events: count, photos: photos)
        let shipped = try await ship(big.folder, stream: "VTBENCH_REWRITE_\(UUID().uuidString.prefix(8))", nats)
        var storeOptions = StoreOptions()
        storeOptions.collectionInterval = nil
        let store = try await TouristStore.open(at: big.folder, options: storeOptions)
        guard let pin = store.state.pins.keys.sorted().first else { throw BenchFailure("the workload left no pin to forget") }
        let forgotten = try await store.forget(pin)
        try await store.close()
        say("forgot a place: \(forgotten.erasedEvents) events erased")

        var options = ReplicationOptions()
        options.stream = shipped.stream.name
        let replicator = try await Replicator.start(store: big.folder, connection: nats, servers: urls, options: options)
        var started = ContinuousClock.now
        try await replicator.shipAvailable()
        let rewriteSeconds = Measure.seconds(since: started)
        guard let rewrite = replicator.lastRewrite, rewrite.changedMessages > 0 else {
            throw BenchFailure("shipping the forget did not rewrite the stream: \(String(describing: replicator.lastRewrite))")
        }
        let bucket = photos
            ? "; \(Figure.grouped(Double(shipped.status.photosUploaded))) photos in the bucket listed, \(Figure.grouped(Double(rewrite.photosDeleted))) deleted"
            : ""
        report.add(Row(
            what: "ship the forget, which rewrites the stream: \(Figure.grouped(Double(rewrite.messages))) messages read and compared,"
                + " \(Figure.grouped(Double(rewrite.changedMessages))) held the place; the safety copy and the stream written again" + bucket,
            ours: "\(Figure.fixed(rewriteSeconds, 1)) s (\(Figure.grouped(Double(replicator.acknowledgedEvents) / rewriteSeconds)) events/s)"))
        try replicator.requestRewrite()
        started = ContinuousClock.now
        try await replicator.shipAvailable()
        let compareSeconds = Measure.seconds(since: started)
        guard replicator.lastRewrite?.changedMessages == 0 else { throw BenchFailure("a second rewrite still found erased events") }
        report.add(Row(
            what: "a rewrite asked for when nothing changed: the stream read and compared, left as it was",
            ours: "\(Figure.fixed(compareSeconds, 1)) s (\(Figure.grouped(Double(replicator.acknowledgedEvents) / compareSeconds)) events/s)"))
    }

    /// A store of the workload, with or without its photos' bytes; its head.
    private func writeStore(_ folder: String, events count: Int, photos: Bool) async throws -> (folder: String, events: Int, head: LogHead?) {
        let started = ContinuousClock.now
        let written = try await BenchPhotos.writeStore(at: folder, events: count, seed: seed, photos: photos)
        say("wrote \(Figure.grouped(Double(written.events))) events and \(Figure.grouped(Double(written.photos))) photos"
            + " in \(Figure.fixed(Measure.seconds(since: started), 1)) s")
        return (folder, written.events, try LogReader(directory: folder + "/log", payloadCodec: EventCodec.blockCodec).head(at: UInt64(written.events)))
    }

    /// `StreamRestore.restore`, checked head for head against the store shipped; its rows.
    private func restore(
        _ stream: ReplicationStream, of store: (folder: String, events: Int, head: LogHead?), into copy: String, _ nats: NATSConnection,
        target: Bool
    ) async throws {
        let restored = try await StreamRestore.restore(connection: nats, stream: stream, to: copy)
        guard restored.head == store.head, restored.events == UInt64(store.events) else {
            throw BenchFailure("the restore ended at \(String(describing: restored.head)), not at the store's head \(String(describing: store.head))")
        }
        let eventRate = Double(restored.events) / restored.logSeconds
        let photoSeconds = restored.seconds - restored.logSeconds
        report.add(Row(
            what: "restore of \(Figure.grouped(Double(restored.events))) events (\(Figure.grouped(Double(restored.messages))) messages):"
                + " read, check, write the log",
            ours: perSecond(eventRate) + " (\(Figure.fixed(restored.logSeconds, 1)) s)", target: target ? "≥ 200,000 events/s" : "",
            verdict: target ? Target.atLeast(eventRate, 200_000) : nil))
        report.add(Row(
            what: "… then open the store and fetch its photos: \(Figure.grouped(Double(restored.photos))) fetched,"
                + " \(Figure.grouped(Double(restored.missingPhotos))) not in the bucket",
            ours: "\(Figure.fixed(photoSeconds, 1)) s"
                + (restored.photos > 0 ? " (\(perSecond(Double(restored.photos) / photoSeconds)) photos)" : "")))
        report.add(Row(what: "… the whole restore, head for head", ours: "\(Figure.fixed(restored.seconds, 1)) s"))
    }

    /// `shipAvailable` of the whole store into a new stream, timed from after the replicator's
    /// start (which makes the stream and the bucket).
    private func ship(_ folder: String, stream: String, _ nats: NATSConnection) async throws
        -> (status: ReplicationStatus, seconds: Double, stream: ReplicationStream)
    {
        var options = ReplicationOptions()
        options.stream = stream
        let replicator = try await Replicator.start(store: folder, connection: nats, servers: urls, options: options)
        let started = ContinuousClock.now
        let status = try await replicator.shipAvailable()
        let seconds = Measure.seconds(since: started)
        say("shipped \(Figure.grouped(Double(status.acknowledgedEvents))) events and \(status.photosUploaded) photos to \(stream) in \(Figure.fixed(seconds, 1)) s")
        return (status, seconds, replicator.stream)
    }

    // MARK: Helpers

    /// A new store in a temporary folder, durable as the app opens it, closed and removed after.
    private func withStore<T>(_ name: String, _ body: (TouristStore, String) async throws -> T) async throws -> T {
        let folder = Measure.temporaryFolder(name) + "/store"
        defer { try? FileManager.default.removeItem(atPath: (folder as NSString).deletingLastPathComponent) }
        var options = StoreOptions()
        options.collectionInterval = nil
        let store = try await TouristStore.open(at: folder, options: options)
        do {
            let result = try await body(store, folder)
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }

    private func say(_ text: String) { FileHandle.standardError.write(Data("  \(text)\n".utf8)) }
}
