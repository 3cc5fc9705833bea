#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Foundation
import NATSClient
import Synchronization

/// A network namespace for one device of a test, joined to this machine by two veth pairs, so
/// that the test can pull the device's cable to the cluster while it still drives the device
/// over HTTP (docs/SYNC.md, "Tests"):
///
/// - the **control** pair: the device listens on ``deviceAddress``, which the test reaches;
/// - the **link** pair: the device's only way to ``clusterAddress``, an address this machine
///   holds on its loopback interface, where the test's servers take clients (each device outside
///   the namespace reaches it through loopback).
///
/// ``cut()`` takes this machine's end of the link down: the device's packets to the cluster go
/// nowhere, so its connections hang, unanswered, and a new connection fails only once the
/// neighbour it routes through stops answering, as with a cable pulled out (a killed server
/// refuses at once instead). ``heal()`` brings it up, and TCP's retransmissions carry on what
/// was in flight. Needs root (`ip netns`); ``make()`` says why it cannot.
public final class NetworkNamespace: Sendable {
    public let name: String
    /// The device's address on the control pair: `vt serve --host` inside the namespace.
    public let deviceAddress: String
    /// Where the cluster takes clients: ``NATSTestServers/start(count:auth:host:)``'s host.
    public let clusterAddress: String
    private let linkHostSide: String
    private let loopbackLabel: String

    static let ip = "/usr/sbin/ip"
    static let made = Mutex(0)

    /// Whether a test should expect to make one: as root with iproute2, or wherever
    /// `VT_REQUIRE_NETWORK_NAMESPACES=1` (.ci/run) says that failing to is a failure.
    public static var expected: Bool {
        required || (getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip))
    }

    public static var required: Bool { ProcessInfo.processInfo.environment["VT_REQUIRE_NETWORK_NAMESPACES"] == "1" }

    private init(name: String, deviceAddress: String, clusterAddress: String, linkHostSide: String, loopbackLabel: String) {
        self.name = name
        self.deviceAddress = deviceAddress
        self.clusterAddress = clusterAddress
        self.linkHostSide = linkHostSide
        self.loopbackLabel = loopbackLabel
    }

    /// A new namespace with both pairs up, in a /29 of 10.0.0.0/8 that no address of this
    /// machine is in. Namespaces and addresses a test process that died left behind are removed
    /// first (their names hold its pid).
    public static func make() async throws -> NetworkNamespace {
        guard FileManager.default.isExecutableFile(atPath: ip) else {
            throw NetworkNamespaceUnavailable(reason: "\(ip) is missing (Debian's iproute2)")
        }
        await removeLeftovers()
        let pid = getpid()
        let serial = made.withLock { count in
            count += 1
            return count
        }
        let name = "vtns\(pid)n\(serial)"
        let control = (host: "v\(pid)c\(serial)h", device: "v\(pid)c\(serial)n")
        let link = (host: "v\(pid)l\(serial)h", device: "v\(pid)l\(serial)n")
        let label = "lo:vt\(pid)n\(serial)"
        let taken = try await run(["-4", "-o", "addr", "show"]).output
        for _ in 0..<100 {
            let prefix = "10.\(Int.random(in: 200...250)).\(Int.random(in: 0...255)).", base = 8 * Int.random(in: 0...31)
            if !taken.contains(" " + prefix) {
                let namespace = NetworkNamespace(
                    name: name, deviceAddress: prefix + String(base + 2), clusterAddress: prefix + String(base + 6),
                    linkHostSide: link.host, loopbackLabel: label)
                try await namespace.build(base: base, prefix: prefix, control: control, link: link)
                return namespace
            }
        }
        throw NetworkNamespaceUnavailable(reason: "no free /29 in 10.200.0.0–10.250.255.255")
    }

    private func build(base: Int, prefix: String, control: (host: String, device: String), link: (host: String, device: String)) async throws {
        let address = { (offset: Int) in prefix + String(base + offset) }
        let inside = ["netns", "exec", name, Self.ip]
        let steps: [[String]] = [
            ["netns", "add", name],
            ["link", "add", control.host, "type", "veth", "peer", "name", control.device],
            ["link", "add", link.host, "type", "veth", "peer", "name", link.device],
            ["link", "set", control.device, "netns", name],
            ["link", "set", link.device, "netns", name],
            ["addr", "add", address(1) + "/30", "dev", control.host],
            ["addr", "add", address(5) + "/32", "peer", address(4) + "/32", "dev", link.host],
            ["addr", "add", clusterAddress + "/32", "dev", "lo", "label", loopbackLabel],
            ["link", "set", control.host, "up"],
            ["link", "set", link.host, "up"],
            inside + ["link", "set", "lo", "up"],
            inside + ["addr", "add", deviceAddress + "/30", "dev", control.device],
            inside + ["addr", "add", address(4) + "/32", "peer", address(5) + "/32", "dev", link.device],
            inside + ["link", "set", control.device, "up"],
            inside + ["link", "set", link.device, "up"],
            inside + ["route", "add", clusterAddress + "/32", "via", address(5), "dev", link.device],
        ]
        for step in steps {
            let result = try await Self.run(step)
            guard result.status == 0 else {
                await remove()
                throw NetworkNamespaceUnavailable(reason: "ip \(step.joined(separator: " ")): \(result.errors.trimmingCharacters(in: .whitespacesAndNewlines))")
            }
        }
    }

    /// `executable arguments…` run inside the namespace: what to spawn instead (`ip netns exec`
    /// replaces itself with the program, so the pid is the program's and kill -9 reaches it).
    public func wrap(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        (Self.ip, ["netns", "exec", name, executable] + arguments)
    }

    /// Pulls the device's cable to the cluster out.
    public func cut() async throws { try await set(linkHostSide, "down") }

    /// Plugs it back in.
    public func heal() async throws { try await set(linkHostSide, "up") }

    private func set(_ device: String, _ state: String) async throws {
        let result = try await Self.run(["link", "set", device, state])
        guard result.status == 0 else { throw NATSError.invalidArgument("ip link set \(device) \(state): \(result.errors)") }
    }

    /// Deletes the namespace (its veth pairs go with it) and the cluster's address.
    public func remove() async {
        _ = try? await Self.run(["netns", "delete", name])
        _ = try? await Self.run(["addr", "delete", clusterAddress + "/32", "dev", "lo"])
    }

    /// Namespaces (with their pairs) and loopback addresses named after a process that is gone.
    static func removeLeftovers() async {
        func dead(_ text: Substring) -> Bool {
            guard let pid = Int32(text) else { return false }
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        let namespaces = (try? await run(["netns", "list"]).output) ?? ""
        for line in namespaces.split(separator: "\n") {
            let name = line.split(separator: " ").first ?? ""
            guard name.hasPrefix("vtns"), let pid = name.dropFirst(4).split(separator: "n").first, dead(pid) else { continue }
            _ = try? await run(["netns", "delete", String(name)])
        }
        let addresses = (try? await run(["-4", "-o", "addr", "show", "dev", "lo"]).output) ?? ""
        for line in addresses.split(separator: "\n") {
            let words = line.split(whereSeparator: \.isWhitespace)
            guard let label = words.first(where: { $0.hasPrefix("lo:vt") }), let pid = label.dropFirst(5).split(separator: "n").first, dead(pid),
                let at = words.firstIndex(of: "inet"), at + 1 < words.count
            else { continue }
            _ = try? await run(["addr", "delete", String(words[at + 1]), "dev", "lo"])
        }
    }

    static func run(_ arguments: [String]) async throws -> NATSTestServers.ScriptResult {
        try await NATSTestServers.run(ip, arguments)
    }
}

/// Why a test cannot have a ``NetworkNamespace`` here (not root, no iproute2).
public struct NetworkNamespaceUnavailable: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "no network namespace: \(reason)" }
}
