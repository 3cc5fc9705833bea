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
        let (fd, port) = try LoopbackSocket.listen()
        self.port = port
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
