import AsyncHTTPClient
import Foundation
import Glibc
import NATSTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// A `vt serve` process, with the URL it printed; stopped with SIGTERM, as Ctrl-C would.
final class Served: @unchecked Sendable {
    let process = Process()
    /// Where it serves, ending in "/", without the token.
    let url: String
    /// The access token every request carries, when the server has one.
    let token: String?
    private let errorFile: String

    /// Inside `namespace`, the server listens on its device address, with a token (needed off
    /// loopback).
    init(_ cli: CLI, _ arguments: [String], inside namespace: NetworkNamespace? = nil) throws {
        errorFile = cli.home + "/serve-\(UUID().uuidString.prefix(8)).err"
        guard FileManager.default.createFile(atPath: errorFile, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorFile])
        }
        var arguments = ["serve", "--port", "0", "--tiles", "none", "--photos", "demo"] + arguments
        var executable = CLI.binary
        if let namespace {
            arguments += ["--host", namespace.deviceAddress, "--token", UUID().uuidString.replacingOccurrences(of: "-", with: "")]
            (executable, arguments) = namespace.wrap(executable, arguments)
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = cli.environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: errorFile)
        try process.run()
        // The URL is the one line on standard output; an empty read means the process ended.
        var data = Data()
        while !data.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }
            data.append(more)
        }
        let line = String(decoding: data, as: UTF8.self)
        guard let range = line.range(of: "http://") else {
            process.waitUntilExit()
            let errors = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
            throw ServeFailed(message: "vt serve did not start: \(errors)")
        }
        let printed = String(line[range.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = printed.split(separator: "?token=", maxSplits: 1)
        url = String(parts[0])
        token = parts.count == 2 ? String(parts[1]) : nil
    }

    /// A request to `path` (relative to ``url``), with the token when there is one.
    func send(_ method: HTTPMethod, _ path: String, _ json: String? = nil) async throws -> Answer {
        try await HTTPClient.shared.send(method, url + path, json, token: token)
    }

    var errors: String { (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? "" }

    /// kill -9, as a phone's battery or the system's memory killer would end it.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the process (once) and returns its exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }
}

struct ServeFailed: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

struct Answer {
    var status: Int
    var text: String
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }
}

extension HTTPClient {
    func send(_ method: HTTPMethod, _ url: String, _ json: String? = nil, token: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 22)
        return Answer(status: Int(response.status.code), text: String(buffer: body))
    }
}
