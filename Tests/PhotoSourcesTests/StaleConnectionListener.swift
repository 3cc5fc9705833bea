import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on loopback that does what a server's keep-alive timeout does to a client's
/// pooled connection: it answers the first request on its first connection and keeps that
/// connection open, then, when a second request comes on it, resets it (RST) without an answer.
/// Every later connection gets its request answered with the connection's number as the body.
final class StaleConnectionListener: @unchecked Sendable {
    let port: Int
    /// Connections accepted, and connections reset.
    final class Tally: Sendable {
        let value = Mutex((connections: 0, resets: 0))
    }
    let counts = Tally()
    private let socketDescriptor: Int32
    private let thread: Thread

    init() throws {
        let (fd, port) = try LoopbackSocket.listen()
        self.port = port
        socketDescriptor = fd
        let counts = counts
        thread = Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                let number = counts.value.withLock { $0.connections += 1; return $0.connections }
                guard Self.readHead(client) else { close(client); continue }
                if number == 1 {
                    Self.answer(client, body: "1", keepAlive: true)
                    guard Self.readHead(client) else { close(client); continue }
                    // SO_LINGER with a zero timeout: close sends RST, as a server that dropped an
                    // idle connection answers a request that arrives on it.
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    _ = setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                    counts.value.withLock { $0.resets += 1 }
                } else {
                    Self.answer(client, body: String(number), keepAlive: false)
                }
                close(client)
            }
        }
        thread.start()
    }

    /// Reads until the end of a request head; false when the connection ends first.
    private static func readHead(_ client: Int32) -> Bool {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return false }
            received += buffer[..<count]
        }
        return true
    }

    private static func answer(_ client: Int32, body: String, keepAlive: Bool) {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
            + (keepAlive ? "" : "Connection: close\r\n") + "\r\n"
        let bytes = Array((head + body).utf8)
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func stop() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
        close(socketDescriptor)
    }
}
