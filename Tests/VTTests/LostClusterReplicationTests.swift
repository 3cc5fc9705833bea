import AsyncHTTPClient
import Foundation
import NATSTestSupport
import Testing

/// A cluster that comes back without its data (every server killed, its JetStream folder
/// emptied, started again: a cluster rebuilt, storage lost) gets every device's whole log and
/// photos again from the devices themselves, while they run, and the devices go on syncing
/// through it (docs/SYNC.md, "Faults"). (The name ends in ReplicationTests so that scripts/test
/// runs it with the cluster tests.)
@Suite(.serialized, .heavy)
struct LostClusterReplicationTests {
    @Test func devicesShipEverythingAgainToAClusterThatLostItsData() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        var devices: [Served] = []
        do {
            try await withNATSServers(count: 3) { servers in
                let phoneStore = cli.home + "/phone", laptopStore = cli.home + "/laptop"
                #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", phoneStore]).status == 0)
                #expect(try cli.run(["clone", "--from", phoneStore, "--to", laptopStore, "--name", "laptop"]).status == 0)
                let phoneID = try #require(CLI.object(try cli.run(["device", "--json", "--store", phoneStore]).output)["device"] as? String)
                let phone = try Served(cli, ["--store", phoneStore, "--sync", servers.urls])
                devices.append(phone)
                let laptop = try Served(cli, ["--store", laptopStore, "--sync", servers.urls])
                devices.append(laptop)
                var expected = try await phone.pins()
                expected.append(try await drop(on: phone, 35.6586, 139.7454))
                expected.append(try await drop(on: laptop, 40.6892, -74.0445))
                var problem = await Served.converged(devices, on: expected)
                #expect(problem == nil, "before the loss: \(problem ?? "")")

                for server in 1...3 { try await servers.kill(server) }
                for server in 1...3 {
                    let store = servers.directory + "/n\(server)/store"
                    try FileManager.default.removeItem(atPath: store)
                    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
                }
                for server in 1...3 { try await servers.restart(server) }

                expected.append(try await drop(on: phone, -33.8568, 151.2153))
                expected.append(try await drop(on: laptop, 51.5007, -0.1246))
                problem = await Served.converged(devices, on: expected)
                if problem != nil {
                    var seen = ""
                    for device in devices { seen += "\n\(device.url): \(try await device.pins()) \(try await device.send(.GET, "api/replication").text)" }
                    let jsz = try await HTTPClient.shared.send(.GET, "http://127.0.0.1:\(servers.basePort + 20)/jsz?streams=true")
                    seen += "\njsz: \(jsz.text.prefix(4000))"
                    seen += "\nphone errors: \(phone.errors.suffix(3000))\nlaptop errors: \(laptop.errors.suffix(3000))"
                    Issue.record("after the loss: \(problem!)\(seen)")
                }

                // The cluster holds the map whole again: a new device made from it alone has every pin.
                let tablet = cli.home + "/tablet"
                let made = try cli.run(["clone", "--from", servers.urls, "--stream", "VT_\(phoneID)", "--to", tablet, "--name", "tablet"])
                #expect(made.status == 0, "\(made.errors)")
                let tabletPins = try cli.run(["pins", "--store", tablet, "--json"]).output
                for pin in expected { #expect(tabletPins.contains(pin), "the tablet lacks \(pin): \(tabletPins)") }
                // And its photos: those downloaded before the loss were uploaded again.
                var shown = 0
                for line in CLI.lines(tabletPins) {
                    let album = try #require(CLI.object(String(line))["album"] as? [String: Any])
                    for photo in album["photos"] as? [[String: Any]] ?? [] where photo["state"] as? String == "downloaded" {
                        let digest = try #require(photo["digest"] as? String)
                        shown += 1
                        #expect(
                            FileManager.default.fileExists(atPath: tablet + "/blobs/sha256/" + digest.prefix(2) + "/" + digest.dropFirst(2)),
                            "the tablet lacks photo \(digest) of its albums")
                    }
                }
                #expect(shown > 21, "the first pin's album and others were downloaded: \(shown)")
            }
        } catch {
            Issue.record("threw: \(error); the phone's errors: \(devices.first?.errors.suffix(3000) ?? "")")
        }
        for device in devices where device.stop() != 0 {
            Issue.record("\(device.url) did not stop cleanly: \(device.errors.suffix(2000))")
        }
    }

    func drop(on device: Served, _ latitude: Double, _ longitude: Double) async throws -> String {
        let answer = try await device.send(.POST, "api/pins", #"{"latitude": \#(latitude), "longitude": \#(longitude)}"#)
        #expect(answer.status == 201, "\(answer.text)")
        return try #require(try answer.json()["id"] as? String)
    }
}
