#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Foundation
import NATSClient

/// Real nats-server processes for one test, started by scripts/nats-cluster on ports that were
/// free (a random base, tried again elsewhere when taken), and killed with SIGKILL at the end.
/// The script also kills them if this test process dies first (NATS_CLUSTER_WATCH_PID).
public final class NATSTestServers: Sendable {
    public let directory: String
    public let basePort: Int
    public let count: Int
    /// The client URLs, comma-separated, as `start` printed them.
    public let urls: String
    /// The address the servers take clients on.
    public let host: String

    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    private init(directory: String, basePort: Int, count: Int, urls: String, host: String) {
        self.directory = directory
        self.host = host
        self.basePort = basePort
        self.count = count
        self.urls = urls
    }

    /// Starts `count` servers (1, or 3 as a cluster), with `auth` passed to the script
    /// (`["--user", "ann", "--password", "pw"]` or `["--token", "t"]`), taking clients on `host`
    /// (an address of this machine: a ``NetworkNamespace``'s ``NetworkNamespace/clusterAddress``
    /// for a device inside one).
    public static func start(count: Int = 1, auth: [String] = [], host: String = "127.0.0.1") async throws -> NATSTestServers {
        var lastError = ""
        for _ in 0..<6 {
            let directory = NSTemporaryDirectory() + "vt-nats-\(UUID().uuidString.prefix(8))"
            let base = basePorts.randomElement()!
            let result = try await script(["start", directory, String(base), "--servers", String(count), "--host", host] + auth)
            if result.status == 0 {
                let urls = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
                return NATSTestServers(directory: directory, basePort: base, count: count, urls: urls, host: host)
            }
            lastError = result.errors
            _ = try? await script(["stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        throw NATSError.invalidArgument("scripts/nats-cluster start failed six times; last: \(lastError)")
    }

    /// Base ports (steps of 50) whose servers' ports all lie below the kernel's range for the
    /// local ports of outgoing connections. A server killed by a test frees its ports until it
    /// restarts; in that range any connection may take one meanwhile (the cluster's own servers
    /// dial each other's routes all the while), and the restart then fails with "address already
    /// in use", as it once did in CI.
    static let basePorts: [Int] = {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let lowest = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        // Room for 40 bases at least, even where the range starts low.
        return Array(stride(from: 10_000, to: max(lowest - 50, 12_000), by: 50))
    }()

    public func port(_ server: Int) -> Int { basePort + server - 1 }
    public func url(_ server: Int) -> String { "nats://\(host):\(port(server))" }

    /// kill -9 of server `server` (1-based).
    public func kill(_ server: Int) async throws {
        let result = try await Self.script(["kill", directory, String(server)])
        guard result.status == 0 else { throw NATSError.invalidArgument("kill failed: \(result.errors)") }
    }

    /// Starts server `server` again, with its config and store, once it answers.
    public func restart(_ server: Int) async throws {
        let result = try await Self.script(["restart", directory, String(server)])
        guard result.status == 0 else { throw NATSError.invalidArgument("restart failed: \(result.errors)") }
    }

    /// The last `lines` warnings and errors server `server` (1-based) logged, for a failing
    /// test's message: whether the cluster itself was stuck (no leader for a stream, a raft
    /// group lost) or its clients were.
    public func warnings(_ server: Int, lines: Int = 8) -> [String] {
        let log = (try? String(contentsOfFile: "\(directory)/n\(server)/server.log", encoding: .utf8)) ?? ""
        return Array(log.split(separator: "\n").filter { $0.contains("[WRN]") || $0.contains("[ERR]") }.suffix(lines).map(String.init))
    }

    public func stop() async {
        _ = try? await Self.script(["stop", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    public struct ScriptResult { public var status: Int32; public var output: String; public var errors: String }

    public static func script(_ arguments: [String]) async throws -> ScriptResult {
        try await run(repository + "/scripts/nats-cluster", arguments)
    }

    /// Runs a program with posix_spawn and reaps it with waitpid: Foundation's Process left the
    /// script a zombie here, reporting it running for ever (the servers it starts outlive it).
    public static func run(_ path: String, _ arguments: [String]) async throws -> ScriptResult {
        let outputPath = NSTemporaryDirectory() + "vt-nats-script-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: outputPath + ".out")
            try? FileManager.default.removeItem(atPath: outputPath + ".err")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, outputPath + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Every other descriptor of this process goes with it (posix_spawn has no portable
        // "close the rest"): scripts/nats-cluster closes them first thing, before it starts the
        // servers and the watcher that outlive it.
        var environment = ProcessInfo.processInfo.environment
        environment["NATS_CLUSTER_WATCH_PID"] = String(getpid())
        environment["NATS_CLUSTER_TIMEOUT"] = "60"
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw NATSError.invalidArgument("cannot run \(path): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 { try await Task.sleep(for: .milliseconds(20)) }
        let out = (try? String(contentsOfFile: outputPath + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: outputPath + ".err", encoding: .utf8)) ?? ""
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ScriptResult(status: exitStatus, output: out, errors: err)
    }
}

/// Runs `body` with fresh servers, which are killed afterwards even when `body` throws.
public func withNATSServers<T>(
    count: Int = 1, auth: [String] = [], host: String = "127.0.0.1", _ body: (NATSTestServers) async throws -> T
) async throws -> T {
    let servers = try await NATSTestServers.start(count: count, auth: auth, host: host)
    do {
        let result = try await body(servers)
        await servers.stop()
        return result
    } catch {
        await servers.stop()
        throw error
    }
}

/// Options for tests: quick to give up on a dead server, generous for a loaded machine.
public func testOptions(connectTimeout: Duration = .seconds(10)) -> NATSOptions {
    var options = NATSOptions()
    options.connectTimeout = connectTimeout
    options.attemptTimeout = .seconds(3)
    options.requestTimeout = .seconds(10)
    options.reconnectWait = .milliseconds(100)
    return options
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held. The timeout
/// only bounds how long a failing test hangs: it is long, since the full suite on two cores
/// once took over 30 s for a reconnect that takes under one alone.
public func eventually(timeout: Duration = .seconds(120), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
