import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on loopback that answers every connection with a plain-text HTTP error and
/// closes it: what a TLS client meets when an https endpoint is not speaking TLS.
final class PlainTextListener: @unchecked Sendable {
    let port: Int
    private let socketDescriptor: Int32
    private let thread: Thread

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        socketDescriptor = fd
        thread = Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                let answer = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(client)
            }
        }
        thread.start()
    }

    func stop() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
        close(socketDescriptor)
    }
}
