import Foundation
import StorageTestSupport
import Testing

/// `vt` as people run it: the built binary, its output and its exit codes.
@Suite(.waitsForProcesses) struct DemoCommandTests {
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    func vt(_ arguments: [String], environment: [String: String]? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }

    @Test func theLogDemoAppendsReplaysAndVerifies() throws {
        let store = TemporaryFolder.uniquePath("demo-test")
        defer { try? FileManager.default.removeItem(atPath: store) }
        let run = try vt(["log-demo", "--events", "2500", "--store", store])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("appended 2500 events"))
        #expect(run.output.contains("replayed 2500 events"))
        #expect(run.output.contains("every sequence number and payload matches"))
        #expect(run.output.contains("checksums, sequence and hash chain all hold"))
        #expect(run.output.contains("done; the log is kept in \(store)"))
        #expect(FileManager.default.fileExists(atPath: store + "/00000000000000000001.seg"))

        // The store it kept is a real log with those events.
        let again = try vt(["log-demo", "--store", store])
        #expect(again.status != 0)
        #expect(again.errors.contains("already exists"))
    }

    @Test func theLogDemoRemovesItsTemporaryLog() throws {
        let run = try vt(["log-demo", "--events", "150", "--durability", "none"])
        #expect(run.status == 0, "\(run.errors)")
        let directory = try #require(run.output.split(separator: "\n").first?.split(separator: " ")[4...4].first)
        #expect(!FileManager.default.fileExists(atPath: String(directory)))
        #expect(run.output.contains("the temporary log was removed"))
    }

    @Test func badArgumentsAreUsageErrors() throws {
        for arguments in [
            ["log-demo", "--events", "0"], ["log-demo", "--events", "many"], ["log-demo", "--durability", "sometimes"],
            ["frobnicate"], ["demo", "--per-page", "0"], ["demo", "--per-page", "251"],
        ] {
            let run = try vt(arguments)
            #expect(run.status == 2, "\(arguments): exit \(run.status)")
            #expect(run.errors.contains("Error:"), "\(arguments)")
        }
        let help = try vt(["log-demo", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("Append, replay and verify synthetic events"))
        #expect(help.output.contains("--durability"))
        let demoHelp = try vt(["demo", "--help"])
        #expect(demoHelp.status == 0)
        #expect(demoHelp.output.contains("FLICKR_API_KEY") && demoHelp.output.contains("--store"))
    }
}
