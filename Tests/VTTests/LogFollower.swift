import Foundation

/// `vt log --follow --json` run as a process beside the test: the test waits for the lines it
/// expects, never for time. Stopped with SIGKILL at the end (a test process may pass a blocked
/// SIGTERM on to its children); a watchdog bounds a wedged follower only.
final class LogFollower {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var data = Data()
    private let watchdog: Task<Void, any Error>

    init(_ cli: CLI, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["log", "--follow", "--json"] + arguments
        process.environment = cli.environment
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let pid = process.processIdentifier
        watchdog = Task {
            try await Task.sleep(for: .seconds(120))
            kill(pid, SIGKILL)
        }
    }

    /// Reads until `count` lines are there (or the follower ends), and returns every line so far.
    func lines(until count: Int) throws -> [[String: Any]] {
        while data.count(where: { $0 == UInt8(ascii: "\n") }) < count {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }  // the follower ended
            data.append(more)
        }
        return try CLI.lines(String(decoding: data, as: UTF8.self)).map(CLI.object)
    }

    /// Stops the follower; returns what it wrote on stderr.
    func stop() -> String {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        watchdog.cancel()
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}
