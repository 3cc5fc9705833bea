import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP connection to a loopback port, driven byte by byte: the slow, idle and oversized
/// clients an HTTP library will not imitate.
///
/// Connecting and sending block (a server slow to accept makes `connect` wait), so they run on
/// a thread of their own (``open(count:port:sending:)``): on Swift's small cooperative pool
/// they would stall the servers' tasks, and every other test's, that share it.
final class RawConnection: Sendable {
    /// `count` connections to `port`, each sent `text` (when not empty), opened off the pool.
    static func open(count: Int = 1, port: Int, sending text: String = "") async throws -> [RawConnection] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try (0..<count).map { _ in
                        let connection = try RawConnection(port: port)
                        if !text.isEmpty { connection.write(text) }
                        return connection
                    }
                })
            }
        }
    }

    /// Sends `bytes` off the pool; false once the server has closed.
    func sendOffPool(_ bytes: [UInt8]) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.write(bytes)) }
        }
    }

    private let descriptor: Int32

    init(port: Int) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw Failure("connect to port \(port): errno \(code)")
        }
    }

    deinit { close(descriptor) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Sends what it can; false once the server has closed (a refused body's rest is not read).
    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
            #else
            let flags: Int32 = 0
            #endif
            let put = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, bytes.count - sent, flags) }
            if put < 0 { return false }
            sent += put
        }
        return true
    }

    /// Everything the server sends until it closes the connection, or nil when it is still open
    /// after `limit` seconds (a bound on giving up: the test waits for the close).
    func readUntilClosed(limit: Duration = .seconds(60)) async -> [UInt8]? {
        let (bytes, closed) = await read(limit: limit) { _ in false }
        return closed ? bytes : nil
    }

    /// What the server sent until `enough` says so or the server closed the connection (then
    /// `closed`), or until `limit`. It waits in `poll` for the server to send or close, on a
    /// thread of its own, so the servers' tasks keep the pool they share with the tests.
    func read(limit: Duration = .seconds(60), until enough: @escaping @Sendable ([UInt8]) -> Bool) async -> (bytes: [UInt8], closed: Bool) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.readWaiting(limit: limit, until: enough)) }
        }
    }

    private func readWaiting(limit: Duration, until enough: ([UInt8]) -> Bool) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + limit
        while !enough(received) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return (received, false) }
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            if ready < 0 { return (received, true) }
            let got = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if got <= 0 { return (received, true) }  // closed (0) or reset (-1): either way, gone
            received += buffer[..<got]
        }
        return (received, false)
    }

    /// The head of the server's answer, once it is whole, or what came before the server closed.
    func readHead(limit: Duration = .seconds(60)) async -> (head: String, closed: Bool) {
        let (bytes, closed) = await read(limit: limit) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
        return (String(decoding: bytes, as: UTF8.self), closed)
    }
}
