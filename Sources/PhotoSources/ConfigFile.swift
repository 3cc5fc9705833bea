#if canImport(Glibc)
import Glibc
private let systemRead = Glibc.read
#elseif canImport(Darwin)
import Darwin
private let systemRead = Darwin.read
#endif

/// Reads the small configuration file that may hold the API key.
enum ConfigFile {
    /// The most a key file may hold: it is one line.
    static let maxBytes = 4096

    /// The file's text, or nil when there is no such file.
    static func read(_ path: String) throws(PhotoSourceError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw PhotoSourceError(.configuration, "cannot read \(path): \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw PhotoSourceError(.configuration, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes else {
            throw PhotoSourceError(.configuration, "\(path) is larger than \(maxBytes) bytes; it should hold only the key")
        }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            throw PhotoSourceError(.configuration, "\(path) is not UTF-8 text")
        }
        return text
    }
}
