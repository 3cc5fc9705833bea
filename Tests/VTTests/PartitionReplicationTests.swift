import AsyncHTTPClient
import Foundation
import NATSTestSupport
import Testing

/// A device whose cable to the cluster is pulled out (its `vt serve --sync` in a network
/// namespace whose link the test takes down: its packets go nowhere, nothing is refused) says
/// so within seconds, goes on working alone, and converges with the other device once the cable
/// is back, both ways (docs/SYNC.md, "Faults"). Without the liveness probe after a timed-out
/// request, the device would show "connected" until its periodic pings gave up (40–60 s).
/// (The name ends in ReplicationTests so that scripts/test runs it with the cluster tests.)
@Suite(.serialized, .heavy, .enabled(if: NetworkNamespace.expected, "needs root and iproute2 for a network namespace"))
struct PartitionReplicationTests {
    @Test func aDeviceCutOffSaysSoWorksAloneAndConvergesWhenItIsBack() async throws {
        let namespace = try await NetworkNamespace.make()
        let cli = CLI()
        defer { cli.cleanUp() }
        var devices: [Served] = []
        do {
            try await withNATSServers(count: 3, host: namespace.clusterAddress) { servers in
                let phoneStore = cli.home + "/phone", laptopStore = cli.home + "/laptop"
                #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", phoneStore]).status == 0)
                #expect(try cli.run(["clone", "--from", phoneStore, "--to", laptopStore, "--name", "laptop"]).status == 0)
                let phone = try Served(cli, ["--store", phoneStore, "--sync", servers.urls], inside: namespace)
                devices.append(phone)
                let laptop = try Served(cli, ["--store", laptopStore, "--sync", servers.urls])
                devices.append(laptop)
                let first = try #require(try await phone.pins().first)
                #expect(await Served.converged(devices, on: [first]) == nil)

                try await namespace.cut()
                let alone = try await phone.send(.POST, "api/pins", #"{"latitude": 35.6586, "longitude": 139.7454}"#)
                #expect(alone.status == 201, "the phone drops a pin alone: \(alone.text)")
                let phonePin = try #require(try alone.json()["id"] as? String)
                var lastStatus: [String: Any] = [:]
                #expect(
                    try await eventually {
                        lastStatus = try await phone.send(.GET, "api/replication").json()
                        return lastStatus["connected"] as? Bool == false
                    }, "the phone says it is not connected: \(lastStatus)")
                #expect((lastStatus["lag_events"] as? Int ?? 0) > 0, "its pin waits to be sent: \(lastStatus)")
                #expect(try await phone.send(.DELETE, "api/pins/\(first)").status == 200, "the phone removes a pin alone")
                let laptopDrop = try await laptop.send(.POST, "api/pins", #"{"latitude": 40.6892, "longitude": -74.0445}"#)
                let laptopPin = try #require(try laptopDrop.json()["id"] as? String)
                // Nothing can reach the phone: its cable is out.
                #expect(try await phone.pins() == [phonePin])

                try await namespace.heal()
                let problem = await Served.converged(devices, on: [phonePin, laptopPin])
                #expect(problem == nil, "\(problem ?? "")")
            }
        } catch {
            Issue.record("threw: \(error); the phone's errors: \(devices.first?.errors.suffix(2000) ?? "")")
        }
        for device in devices where device.stop() != 0 {
            Issue.record("\(device.url) did not stop cleanly: \(device.errors.suffix(2000))")
        }
        await namespace.remove()
    }
}
