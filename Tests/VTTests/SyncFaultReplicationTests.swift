import AsyncHTTPClient
import Foundation
import NATSTestSupport
import SeededRandom
import StorageTestSupport
import Testing

/// Three devices of one map, each its own `vt serve --sync` on a real three-server cluster,
/// driven over HTTP as people would, all at once, while servers are killed (one, two of three,
/// all three) and restarted, a device is cut off from the cluster while the others go on (device
/// 0 runs in a network namespace whose link to the cluster the test pulls out: a partition), and
/// devices are killed with kill -9 and started again (docs/SYNC.md, "Tests"). Where no namespace
/// can be made (not root), device 0 knows only server 1 and the partition kills that server;
/// `VT_REQUIRE_NETWORK_NAMESPACES=1` (set by .ci/run) makes that a failure instead.
/// At the end every device shows the same pins at the same places, every pin dropped and never
/// removed is there, every pin removed is gone, and each device has taken every other device's
/// events. Seeded: a failing seed is printed and replays alone with `VT_SYNC_FAULT_SEED=<seed>`;
/// `VT_SYNC_FAULT_SEEDS=<n>` runs more. (The suite's name ends in ReplicationTests so that
/// scripts/test runs it in the pass with the other cluster tests.)
@Suite(.serialized, .heavy) struct SyncFaultReplicationTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["VT_SYNC_FAULT_SEED"].flatMap(UInt64.init) { return [one] }
        return Array(1...(environment["VT_SYNC_FAULT_SEEDS"].flatMap(UInt64.init) ?? 2))
    }

    @Test func threeDevicesConvergeThroughKilledServersAndKilledDevices() async throws {
        for seed in Self.seeds {
            do {
                var run = SyncFaultRun(seed: seed)
                let problems = try await run.play()
                if !problems.isEmpty {
                    Issue.record("seed \(seed) (replay it alone: VT_SYNC_FAULT_SEED=\(seed)): \(problems.joined(separator: "; "))")
                    return
                }
            } catch {
                Issue.record("seed \(seed) (replay it alone: VT_SYNC_FAULT_SEED=\(seed)) threw: \(error)")
                return
            }
        }
    }
}

/// One seeded run: actions on random devices, faults between them.
struct SyncFaultRun {
    let seed: UInt64
    var random: SplitMix
    let cli = CLI()
    var stores: [String] = []
    var devices: [Served?] = []
    /// Pins dropped (with where they ended up on the device that last moved them) and removed.
    var dropped: Set<String> = []
    var removed: Set<String> = []
    /// Faults under way: each heals after the step it names.
    var downServers: [Int: Int] = [:]
    var downDevices: [Int: Int] = [:]
    /// Device 0's namespace, and the step its cut link heals after.
    var namespace: NetworkNamespace?
    var cutUntil: Int?
    var log: [String] = []
    /// When each fault healed.
    var healed: [String] = []
    var actions = 0
    /// When the run began: the log says when each fault came, for a failure's reading (an
    /// outage's length matters to a device's reconnecting).
    let began = ContinuousClock.now

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix(seed: seed)
    }

    mutating func play() async throws -> [String] {
        do {
            namespace = try await NetworkNamespace.make()
        } catch let unavailable as NetworkNamespaceUnavailable {
            if NetworkNamespace.required { throw unavailable }
            print("sync fault seed \(seed): \(unavailable); device 0 is cut off by killing its only server instead")
        }
        do {
            let problems = try await playWithServers()
            await namespace?.remove()
            return problems
        } catch {
            await namespace?.remove()
            throw error
        }
    }

    mutating func playWithServers() async throws -> [String] {
        defer {
            for device in devices { device?.kill() }
            cli.cleanUp()
        }
        return try await withNATSServers(count: 3, host: namespace?.clusterAddress ?? "127.0.0.1") { servers in
            stores = (0..<3).map { cli.home + "/device\($0)" }
            #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", stores[0]]).status == 0)
            for index in 1..<3 {
                #expect(try cli.run(["clone", "--from", stores[0], "--to", stores[index], "--name", "device \(index)"]).status == 0)
            }
            for index in 0..<3 { devices.append(try start(index, servers)) }
            for step in 0..<Int.random(in: 24...36, using: &random) {
                try await heal(upTo: step, servers)
                if Int.random(in: 0..<5, using: &random) == 0 { try await fault(at: step, servers) }
                try await act()
            }
            try await heal(upTo: .max, servers)
            var problems = try await converged()
            if !problems.isEmpty {
                // The cluster's side of a failure: what each server last warned of.
                for server in 1...3 {
                    problems.append("server \(server) warned: \(servers.warnings(server))")
                }
            }
            let faults = log
            let count = { (kind: String) in faults.filter { $0.contains(kind) }.count }
            // A partition is a server kill too where no namespace could be made.
            let cuts = count("cut off")
            let partitions = namespace == nil ? "\(cuts) of them partitions of device 0" : "\(cuts) partition\(cuts == 1 ? "" : "s") of device 0 (its link pulled out)"
            print(
                "sync fault seed \(seed): \(actions) actions, \(count("server")) server kills, \(partitions),"
                    + " \(count("device") - count("cut off")) device kills; \(problems.isEmpty ? "converged" : "FAILED")")
            return problems
        }
    }

    /// Device 0 runs in the namespace, knowing every server, or, without one, knows only server
    /// 1: while its link is cut (or that server is down) it works alone, while the others sync.
    func start(_ index: Int, _ servers: NATSTestServers) throws -> Served {
        let only = index == 0 && namespace == nil
        return try Served(
            cli, ["--store", stores[index], "--sync", only ? servers.url(1) : servers.urls, "--per-page", "2"],
            inside: index == 0 ? namespace : nil)
    }

    /// One fault: servers killed (one, two or all three), device 0 cut off, or a device killed,
    /// each for a few steps.
    mutating func fault(at step: Int, _ servers: NATSTestServers) async throws {
        let until = step + Int.random(in: 1...4, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 2 where namespace != nil:
            // A partition: device 0's cable to the cluster is pulled out; the servers run on.
            guard cutUntil == nil else { return }
            try await namespace!.cut()
            cutUntil = until
            log.append("step \(step) (\(elapsed)): device 0 cut off (its link pulled out) until \(until)")
        case 2:
            // A partition: device 0's only server goes, the cluster keeps its other two.
            guard downServers[1] == nil else { return }
            try await servers.kill(1)
            downServers[1] = until
            log.append("step \(step) (\(elapsed)): device 0 cut off (server 1 killed) until \(until)")
        case 0, 1:
            let up = (1...3).filter { downServers[$0] == nil }
            let count = min(up.count, [1, 1, 2, 3][Int.random(in: 0..<4, using: &random)])
            for server in up.shuffled(using: &random).prefix(count) {
                try await servers.kill(server)
                downServers[server] = until
                log.append("step \(step) (\(elapsed)): server \(server) killed until \(until)")
            }
        default:
            let up = (0..<3).filter { downDevices[$0] == nil }
            guard let device = up.randomElement(using: &random) else { return }
            devices[device]?.kill()
            devices[device] = nil
            downDevices[device] = until
            log.append("step \(step) (\(elapsed)): device \(device) killed until \(until)")
        }
    }

    var elapsed: String { "\((ContinuousClock.now - began).components.seconds) s" }

    mutating func heal(upTo step: Int, _ servers: NATSTestServers) async throws {
        if let until = cutUntil, until <= step {
            try await namespace!.heal()
            cutUntil = nil
            healed.append("step \(step) (\(elapsed)): device 0's link back")
        }
        for (server, until) in downServers where until <= step {
            try await servers.restart(server)
            downServers[server] = nil
            healed.append("step \(step) (\(elapsed)): server \(server) back")
        }
        for (device, until) in downDevices where until <= step {
            devices[device] = try start(device, servers)
            downDevices[device] = nil
            healed.append("step \(step) (\(elapsed)): device \(device) back")
        }
    }

    /// What a person does on one device: drops a pin, removes one it shows, or drags one.
    enum Action {
        case drop(latitude: Double, longitude: Double)
        case remove(String)
        case drag(String, latitude: Double, longitude: Double)
    }

    /// A person on each running device acts at once: each drops a pin, removes one it shows, or
    /// drags one, and the requests go together. The actions are drawn first, one device after
    /// the other, so a seed names them whatever order the answers come in.
    mutating func act() async throws {
        var planned: [(Served, Action)] = []
        for index in 0..<3 {
            guard let device = devices[index] else { continue }
            let shown = (try await device.send(.GET, "api/state").json()["pins"] as? [[String: Any]] ?? [])
                .compactMap { $0["id"] as? String }
            let latitude = Double(Int.random(in: -6000...6000, using: &random)) / 100
            let longitude = Double(Int.random(in: -17000...17000, using: &random)) / 100
            switch shown.isEmpty ? 0 : Int.random(in: 0..<4, using: &random) {
            case 0, 1: planned.append((device, .drop(latitude: latitude, longitude: longitude)))
            case 2: planned.append((device, .remove(shown.randomElement(using: &random)!)))
            default: planned.append((device, .drag(shown.randomElement(using: &random)!, latitude: latitude, longitude: longitude)))
            }
        }
        let done = try await withThrowingTaskGroup(of: (dropped: String?, removed: String?).self) { group in
            for (device, action) in planned {
                group.addTask {
                    switch action {
                    case .drop(let latitude, let longitude):
                        let answer = try await device.send(.POST, "api/pins", #"{"latitude": \#(latitude), "longitude": \#(longitude)}"#)
                        guard answer.status == 201 else { return (nil, nil) }
                        return (try answer.json()["id"] as? String, nil)
                    case .remove(let pin):
                        let answer = try await device.send(.DELETE, "api/pins/\(pin)")
                        return (nil, answer.status == 200 ? pin : nil)
                    case .drag(let pin, let latitude, let longitude):
                        _ = try await device.send(.POST, "api/pins/\(pin)/drag", #"{"latitude": \#(latitude), "longitude": \#(longitude)}"#)
                        return (nil, nil)
                    }
                }
            }
            var done: [(dropped: String?, removed: String?)] = []
            while let one = try await group.next() { done.append(one) }
            return done
        }
        actions += planned.count
        for one in done {
            if let pin = one.dropped { dropped.insert(pin) }
            if let pin = one.removed { removed.insert(pin) }
        }
    }

    /// Waits until every device shows the same pins and has nothing left to send or receive,
    /// then checks what the person did.
    func converged() async throws -> [String] {
        var last: [String] = []
        let settled = try await eventually(timeout: .seconds(240)) {
            var views: [String] = []
            var statuses: [String] = []
            for device in devices.compactMap({ $0 }) {
                let sync = try await device.send(.GET, "api/replication").json()
                statuses.append("\(device.url): \(sync)")
                // Connected too: cut off, "nothing to receive" is only what the cluster held last.
                guard sync["connected"] as? Bool == true, sync["lag_events"] as? Int == 0, sync["receive_events"] as? Int == 0,
                    sync["pending_photos"] as? Int == 0
                else {
                    last = ["\(device.url): \(sync)"]
                    return false
                }
                let state = try await device.send(.GET, "api/state").json()
                let pins = state["pins"] as? [[String: Any]] ?? []
                // The same events folded (every device's log taken whole), the same pins.
                views.append("\(state["seq"] ?? "?"): " + pins.map { "\($0["id"]!)@\($0["latitude"]!),\($0["longitude"]!)" }.sorted().joined(separator: " "))
            }
            // A device that says it has nothing to send or receive yet differs: what each says.
            last = views + statuses
            return Set(views).count == 1
        }
        var problems: [String] = []
        if !settled {
            // What each device said of its sync as it went (its "cannot be reached", its restarts).
            let said = devices.enumerated().map { "device \($0.offset): \($0.element?.errors.suffix(1500) ?? "not running")" }
            problems.append("the devices did not converge: \(last) after \(log), healed \(healed); \(said.joined(separator: "; "))")
        }
        let pins = try await devices[0]!.send(.GET, "api/state").json()["pins"] as? [[String: Any]] ?? []
        let present = Set(pins.compactMap { $0["id"] as? String })
        let lost = dropped.subtracting(removed).subtracting(present)
        if !lost.isEmpty { problems.append("pins dropped and never removed are missing: \(lost.sorted())") }
        let back = removed.intersection(present)
        if !back.isEmpty { problems.append("pins removed are back: \(back.sorted())") }
        for device in devices.compactMap({ $0 }) where device.stop() != 0 {
            problems.append("\(device.url) did not stop cleanly: \(device.errors.suffix(2000))")
        }
        return problems
    }
}
