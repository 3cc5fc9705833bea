import Foundation
import NATSTestSupport
import StorageTestSupport
import Testing

/// A live command told to stop the moment it says it runs stops, cleanly, every time: the
/// interruption is armed before it says so. (A `vt follow` sent SIGTERM just after its
/// "following …" line once went on for good: the signal came while it was ignored and before
/// the handler that turns it into a stop was armed.) The suite's name ends in
/// ReplicationTests so scripts/test runs it with the other cluster tests.
@Suite(.serialized, .waitsForProcesses) struct StopOnSignalReplicationTests {
    /// Starts `arguments`, sends SIGTERM the moment `line` comes on its standard error (read
    /// as it is written, on a thread of its own, so that the signal follows the line as closely
    /// as it can) and returns the exit status with what it said.
    static func stopAsSoonAsItSays(_ line: String, _ cli: CLI, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        process.environment = cli.environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var said = Data()
        var sent = false
        while true {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said.append(chunk)
            if !sent, String(decoding: said, as: UTF8.self).contains(line) {
                kill(process.processIdentifier, SIGTERM)
                sent = true
            }
        }
        process.waitUntilExit()
        return (sent ? process.terminationStatus : -1, String(decoding: said, as: UTF8.self))
    }

    @Test(arguments: ["replicate", "sync", "follow"])
    func aLiveCommandStoppedAsSoonAsItRunsStopsCleanly(command: String) async throws {
        let cli = CLI()
        defer { cli.cleanUp() }
        try await withNATSServers { servers in
            let store = cli.home + "/store"
            #expect(try cli.run(["pin", "drop", "48.8584", "2.2945", "--store", store]).status == 0)
            #expect(try cli.run(["sync", "--with", servers.url(1), "--once", "--store", store]).status == 0)
            let device = try #require(CLI.object(try cli.run(["device", "--json", "--store", store]).output)["device"] as? String)
            let arguments =
                switch command {
                case "replicate": ["replicate", "--to", servers.url(1), "--store", store]
                case "sync": ["sync", "--with", servers.url(1), "--store", store]
                default: ["follow", "--from", servers.url(1), "--stream", "VT_\(device)", "--store", cli.home + "/replica"]
                }
            for round in 0..<8 {
                let (status, said) = try Self.stopAsSoonAsItSays("interrupt to stop", cli, arguments)
                #expect(status == 0, "vt \(command), round \(round): \(said)")
            }
        }
    }
}
