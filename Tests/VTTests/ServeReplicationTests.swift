import AsyncHTTPClient
import Foundation
import NATSTestSupport
import NIOCore
import NIOHTTP1
import StorageTestSupport
import Testing

/// `vt serve --replicate` and `vt serve --follow` as people run them: two processes, a real
/// nats-server, HTTP. (The suite's name ends in ReplicationTests so scripts/test runs it in the
/// pass with the other cluster tests.)
@Suite(.serialized, .waitsForProcesses) struct ServeReplicationTests {
    @Test("a served store is replicated as it changes, and a served replica follows it and refuses changes")
    func servedReplicaFollowsTheServedOriginal() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try await withNATSServers { servers in
            let http = HTTPClient.shared
            let original = try Served(cli, ["--store", cli.home + "/original", "--replicate", servers.url(1)])
            defer { original.stop() }
            let pin = try await http.send(.POST, original.url + "api/pins", #"{"latitude": 48.8584, "longitude": 2.2945}"#)
            #expect(pin.status == 201, "\(pin.text)")
            // The album downloads meanwhile: wait for it, and for the cluster to have it all.
            var shipped: [String: Any] = [:]
            #expect(try await eventually(timeout: .seconds(120)) {
                shipped = try await http.send(.GET, original.url + "api/replication").json()
                let state = try await http.send(.GET, original.url + "api/state").json()
                let pins = state["pins"] as? [[String: Any]] ?? []
                return pins.first?["status"] as? String == "complete" && shipped["lag_events"] as? Int == 0
                    && shipped["events"] as? Int == state["seq"] as? Int
            }, "\(shipped)")
            #expect(shipped["role"] as? String == "primary")
            #expect(shipped["pending_photos"] as? Int == 0)
            let stream = try #require(shipped["stream"] as? String)

            let replica = try Served(cli, ["--store", cli.home + "/replica", "--follow", servers.url(1), "--stream", stream])
            defer { replica.stop() }
            let config = try await http.send(.GET, replica.url + "api/config").json()
            #expect(config["read_only"] as? Bool == true)
            #expect(config["replication"] as? Bool == true)
            let originalState = try await http.send(.GET, original.url + "api/state").text
            #expect(try await http.send(.GET, replica.url + "api/state").text == originalState)
            let pinID = try #require(pin.json()["id"] as? String)
            let album = try await http.send(.GET, replica.url + "api/pins/\(pinID)").json()["album"] as? [String: Any]
            let photo = try #require((album?["photos"] as? [[String: Any]])?.first?["digest"] as? String)
            #expect(try await http.send(.GET, replica.url + "photos/\(photo)").status == 200, "the photo came from the bucket")

            // Every change is refused with the read-only code, and nothing changes.
            for (method, path, body) in [
                (HTTPMethod.POST, "api/pins", #"{"latitude": 1, "longitude": 2}"#),
                (.POST, "api/pins/\(pinID)/new-collection", nil), (.POST, "api/pins/\(pinID)/retry", nil),
                (.POST, "api/pins/\(pinID)/forget", nil), (.PUT, "api/region", #"{"latitude": 1, "longitude": 2, "latitude_span": 3, "longitude_span": 4}"#),
            ] {
                let refused = try await http.send(method, replica.url + path, body)
                #expect(refused.status == 403, "\(method) \(path): \(refused.text)")
                #expect(refused.text.contains("read-only"), "\(refused.text)")
            }
            #expect(try await http.send(.POST, replica.url + "api/pins/\(pinID)/album").status == 200, "opening an album reads only")
            #expect(try await http.send(.GET, replica.url + "api/state").text == originalState)

            // A change to the original reaches the replica, live.
            #expect(try await http.send(.POST, original.url + "api/pins", #"{"latitude": -33.86, "longitude": 151.21}"#).status == 201)
            var following: [String: Any] = [:]
            #expect(try await eventually(timeout: .seconds(60)) {
                let now = try await http.send(.GET, original.url + "api/state").json()
                let there = try await http.send(.GET, replica.url + "api/state").json()
                following = try await http.send(.GET, replica.url + "api/replication").json()
                return (there["pins"] as? [Any])?.count == 2 && there["seq"] as? Int == now["seq"] as? Int
            }, "\(following)")
            #expect(following["role"] as? String == "replica")
            #expect(following["stream"] as? String == stream)

            #expect(replica.stop() == 0, "\(replica.errors)")
            #expect(original.stop() == 0, "\(original.errors)")
        }
    }

    @Test("vt replicate --once ships a forget and rewrites the stream; --rewrite asks for it; --status with it is refused")
    func replicateRewritesTheStreamAfterAForget() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try await withNATSServers { servers in
            let store = cli.home + "/store"
            for place in [["48.8584", "2.2945"], ["-33.8568", "151.2153"]] {
                let dropped = try cli.run(["pin", "drop", "--store", store, "--json"] + place)
                #expect(dropped.status == 0, "\(dropped.errors)")
            }
            let first = try cli.run(["replicate", "--store", store, "--to", servers.url(1), "--once"])
            #expect(first.status == 0, "\(first.errors)")
            #expect(!first.errors.contains("rewrote"), "nothing forgotten yet")
            let pin = try #require(CLI.lines(try cli.run(["pins", "--store", store]).output).first?.split(separator: " ").first)
            let forgot = try cli.run(["forget", "--store", store, "--yes", String(pin)])
            #expect(forgot.status == 0, "\(forgot.errors)")
            let second = try cli.run(["replicate", "--store", store, "--to", servers.url(1), "--once"])
            #expect(second.status == 0, "\(second.errors)")
            #expect(second.errors.contains("rewrote the stream"), "\(second.errors)")
            let third = try cli.run(["replicate", "--store", store, "--to", servers.url(1), "--once", "--rewrite"])
            #expect(third.status == 0, "\(third.errors)")
            #expect(third.errors.contains("left as it was"), "\(third.errors)")
            let refused = try cli.run(["replicate", "--store", store, "--status", "--rewrite"])
            #expect(refused.status == 2, "\(refused.errors)")
        }
    }

    @Test func aClusterThatCannotBeReachedChangesNothing() throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        // Port 1 on loopback refuses at once.
        for arguments in [["--replicate", "nats://127.0.0.1:1"], ["--follow", "nats://127.0.0.1:1", "--stream", "VT_00"]] {
            let store = cli.home + "/store"
            let run = try cli.run(["serve", "--store", store, "--port", "0"] + arguments)
            #expect(run.status == 1, "\(run.errors)")
            #expect(run.errors.contains("cannot connect to the NATS cluster"), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: store), "nothing was created")
        }
        // vt sync through a cluster that cannot be reached, or with a URL that is none: an error
        // before the store is opened, which stays as it was.
        let store = cli.home + "/synced"
        #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", store]).status == 0)
        let before = try FileManager.default.subpathsOfDirectory(atPath: store).sorted()
        for url in ["nats://127.0.0.1:1", "nats://127.0.0.1:notaport", "tls://"] {
            let run = try cli.run(["sync", "--with", url, "--once", "--store", store])
            #expect(run.status == 1, "\(url): \(run.errors)")
            #expect(run.errors.contains("cannot connect to the NATS cluster"), "\(url): \(run.errors)")
        }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: store).sorted() == before)
        // vt serve --sync with a URL that is none or a server that refuses the credentials:
        // refused before the store is opened or created.
        for url in ["nats://127.0.0.1:notaport", "tls://"] {
            let fresh = cli.home + "/fresh"
            let run = try cli.run(["serve", "--store", fresh, "--port", "0", "--sync", url])
            #expect(run.status == 1 && run.errors.contains("cannot connect to the NATS cluster"), "\(url): \(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: fresh), "nothing was created")
        }
        // Arguments that do not go together.
        for arguments in [
            ["sync", "--with", cli.home + "/other", "--once", "--store", store],
            ["serve", "--store", store, "--sync", "nats://127.0.0.1:1", "--replicate", "nats://127.0.0.1:1"],
            ["serve", "--store", store, "--sync", "nats://127.0.0.1:1", "--stream", "VT_00"],
        ] {
            let run = try cli.run(arguments)
            #expect(run.status == 2, "\(arguments): \(run.errors)")
        }
    }

    @Test("two devices made with vt clone sync through the cluster with vt sync --with nats://… --once")
    func twoDevicesSyncOnceFromTheCommandLine() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try await withNATSServers { servers in
            let phone = cli.home + "/phone", laptop = cli.home + "/laptop"
            #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", phone]).status == 0)
            #expect(try cli.run(["clone", "--from", phone, "--to", laptop, "--name", "laptop"]).status == 0)
            #expect(try cli.run(["pin", "drop", "--store", laptop, "--", "-33.86", "151.21"]).status == 0)
            #expect(try cli.run(["pin", "drop", "35.68", "139.69", "--store", phone]).status == 0)
            for store in [phone, laptop, phone] {
                let run = try cli.run(["sync", "--with", servers.url(1), "--once", "--store", store, "--json"])
                #expect(run.status == 0, "\(run.errors)")
                let status = try CLI.object(run.output)
                #expect(status["eventsToSend"] as? Int == 0, "\(run.output)")
            }
            let pins = try cli.run(["pins", "--store", phone]).output
            #expect(CLI.lines(pins).count == 3, "\(pins)")
            #expect(try cli.run(["pins", "--store", laptop]).output == pins)
            let shown = try cli.run(["sync", "--with", servers.url(1), "--once", "--store", laptop])
            #expect(shown.output.contains("(laptop) through") && shown.output.contains("0 to receive"), "\(shown.output)")
        }
    }

    @Test("vt clone --from nats://… --stream makes a new device from the cluster alone, and refuses what does not go together")
    func aNewDeviceFromTheClusterFromTheCommandLine() async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try await withNATSServers { servers in
            let phone = cli.home + "/phone", laptop = cli.home + "/laptop"
            #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", phone]).status == 0)
            #expect(try cli.run(["sync", "--with", servers.url(1), "--once", "--store", phone]).status == 0)
            let phoneID = try #require(CLI.object(try cli.run(["device", "--json", "--store", phone]).output)["device"] as? String)
            let made = try cli.run(["clone", "--from", servers.url(1), "--stream", "VT_\(phoneID)", "--to", laptop, "--name", "laptop", "--json"])
            #expect(made.status == 0, "\(made.errors)")
            let view = try CLI.object(made.output)
            #expect(view["name"] as? String == "laptop" && view["device"] as? String != phoneID, "\(made.output)")
            #expect(try cli.run(["pins", "--store", laptop]).output == cli.run(["pins", "--store", phone]).output)
            let laptopDevice = try CLI.object(try cli.run(["device", "--json", "--store", laptop]).output)
            let phoneDevice = try CLI.object(try cli.run(["device", "--json", "--store", phone]).output)
            #expect(laptopDevice["map"] as? String == phoneDevice["map"] as? String && laptopDevice["name"] as? String == "laptop")

            for (arguments, says) in [
                (["clone", "--from", servers.url(1), "--to", cli.home + "/x"], "needs --stream"),
                (["clone", "--from", phone, "--stream", "VT_\(phoneID)", "--to", cli.home + "/x"], "--stream goes with --from nats://"),
            ] {
                let refused = try cli.run(arguments)
                #expect(refused.status == 2 && refused.errors.contains(says), "\(arguments): \(refused.errors)")
            }
            // The phone's stream now names a map of two devices: vt follow keeps a replica of the
            // whole map, and stops cleanly on SIGTERM.
            let replica = cli.home + "/replica"
            let errors = cli.home + "/follow.err"
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            let follow = Process()
            follow.executableURL = URL(fileURLWithPath: CLI.binary)
            follow.arguments = ["follow", "--from", servers.url(1), "--stream", "VT_\(phoneID)", "--store", replica]
            follow.environment = cli.environment
            follow.standardError = FileHandle(forWritingAtPath: errors)
            follow.standardOutput = FileHandle.nullDevice
            try follow.run()
            let said = { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }
            let following = await eventually { said().contains("following the map of stream VT_\(phoneID)") }
            follow.terminate()
            follow.waitUntilExit()
            #expect(following && follow.terminationStatus == 0, "\(said())")
            #expect(said().contains("2 devices") && said().contains("the replica holds"), "\(said())")
            #expect(try cli.run(["pins", "--store", replica]).output == cli.run(["pins", "--store", phone]).output)

            let occupied = try cli.run(["clone", "--from", servers.url(1), "--stream", "VT_\(phoneID)", "--to", laptop])
            #expect(occupied.status == 1 && occupied.errors.contains("not an empty folder"), "\(occupied.errors)")
            #expect(!FileManager.default.fileExists(atPath: cli.home + "/x"))
        }
    }
}

