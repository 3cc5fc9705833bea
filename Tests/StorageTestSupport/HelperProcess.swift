import Foundation

/// A helper executable of the tests (built beside the test bundle), run as a second process
/// whose stdout is read line by line: a rival writer, a lock holder, a store to kill.
public final class HelperProcess {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer = Data()

    public init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = try Self.executable(executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = input
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }

    /// The next line of output, or nil when the process closed its output.
    public func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                if buffer.isEmpty { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(chunk)
        }
    }

    public func closeInput() { try? input.fileHandleForWriting.close() }

    /// SIGKILL: no handler runs, nothing is flushed or closed by the process itself.
    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func executable(_ name: String) throws -> URL {
        #if os(Linux)
        let directory = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent()
        #else
        let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") } ?? Bundle.main
        let directory = bundle.bundleURL.deletingLastPathComponent()
        #endif
        let helper = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: helper.path) else {
            throw HelperMissing(path: helper.path)
        }
        return helper
    }
}

public struct HelperMissing: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "the helper \(path) is missing: build it with `swift build --build-tests`" }
}
