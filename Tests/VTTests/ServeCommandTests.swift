import Foundation
import StorageTestSupport
import Testing

/// `vt serve`'s refusals, before anything listens or any store is made. (Serving itself is
/// tested over HTTP in WebAppTests and in a browser in Tests/Browser.)
@Suite(.waitsForProcesses) struct ServeCommandTests {
    @Test(arguments: [
        (["--host", "0.0.0.0"], Int32(2), "needs an access token"),
        (["--host", "0.0.0.0", "--token", "short"], 2, "at least 16 characters"),
        (["--port", "70000"], 2, "outside 0…65535"),
        (["--tiles", "ftp://tiles.example/{z}/{x}/{y}.png"], 2, "must start with http"),
        (["--tiles", "https://tiles.example/{z}/{x}.png"], 2, "must contain {y}"),
        (["--per-page", "0"], 2, "--per-page must be 1 to 250"),
        (["--leaflet", "/nonexistent/leaflet"], 1, "apt-get install libjs-leaflet"),
        (["--replicate", "nats://127.0.0.1:1", "--follow", "nats://127.0.0.1:1"], 2, "exclude each other"),
        (["--follow", "nats://127.0.0.1:1"], 2, "--follow needs --stream"),
        (["--stream", "VT_00"], 2, "--stream goes with --replicate or --follow"),
        (["--replicas", "3"], 2, "--replicas goes with --replicate"),
        (["--replicate", "nats://127.0.0.1:1", "--replicas", "9"], 2, "--replicas must be 1 to 5"),
        (["--replicate", "http://127.0.0.1:1"], 1, "cannot connect to the NATS cluster"),
    ])
    func refusesWhatCannotServe(arguments: [String], status: Int32, message: String) throws {
        let cli = CLI()
        let store = cli.home + "/store"
        let run = try cli.run(["serve", "--store", store, "--port", "0"] + arguments)
        #expect(run.status == status, "\(run.errors)")
        #expect(run.errors.contains(message), "\(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: store), "nothing was created")
    }
}
