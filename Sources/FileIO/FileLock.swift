#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock on a file, held across processes, with the holder named in it.
///
/// ```swift
/// let lock = try FileLock.acquire(at: "/store/LOCK", holder: "pid=\(getpid())")
/// defer { lock.release() }
/// ```
///
/// It is `flock(LOCK_EX | LOCK_NB)`: tied to the open file description, so a second
/// `acquire` fails even inside the same process, and the kernel drops the lock when the
/// holder exits or is killed. Only cooperating programs are held back (it is advisory).
public final class FileLock: HeldLock, @unchecked Sendable {
    /// The lock file's path.
    public let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Takes the lock or fails at once; on success writes `holder` (one line) into the file.
    ///
    /// The file must be the lock's own: a symbolic link at `path` is not followed, and a file
    /// that is not a regular file or that has other names (hard links) is refused, so that
    /// whoever can write into the folder cannot make the holder line overwrite another file.
    ///
    /// - Throws: ``LockHeldError`` naming the current holder when another open file holds
    ///   the lock; ``IOError`` when the file cannot be opened or written, or is not the lock's
    ///   own (`ELOOP` for a link, `EMLINK` for other names, `ENXIO` for a device or a pipe).
    public static func acquire(at path: String, holder: String) throws -> FileLock {
        let descriptor = try retryingOnInterrupt("open", path) {
            open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        }
        return try acquire(descriptor: descriptor, path: path, holder: holder)
    }

    /// Takes the lock on a file opened for reading and writing; takes over `descriptor` (closed
    /// on failure). The checks and errors of ``acquire(at:holder:)``.
    static func acquire(descriptor: Int32, path: String, holder: String) throws -> FileLock {
        do {
            try checkRegularFile(descriptor, path: path, forWriting: true)
        } catch {
            _ = systemClose(descriptor)
            throw error
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            let current = readHolder(descriptor)
            _ = systemClose(descriptor)
            if code == EWOULDBLOCK { throw LockHeldError(path: path, holder: current) }
            throw IOError(operation: "flock", path: path, code: code)
        }
        let lock = FileLock(path: path, descriptor: descriptor)
        let line = Array((holder + "\n").utf8)
        guard ftruncate(descriptor, 0) == 0 else { throw IOError.current("ftruncate", path) }
        let written = line.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == line.count else { throw IOError.current("pwrite", path) }
        return lock
    }

    /// Releases the lock. The holder line stays in the file; it is only meaningful while locked.
    public func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        _ = systemClose(descriptor)
        descriptor = -1
    }

    private static func readHolder(_ descriptor: Int32) -> String {
        var bytes = [UInt8](repeating: 0, count: 512)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard got > 0 else { return "unknown (the lock file names no holder yet)" }
        let text = String(decoding: bytes[..<got], as: UTF8.self)
        return text.split(separator: "\n").first.map(String.init) ?? text
    }
}

/// Another process (or another open handle) holds the lock.
public struct LockHeldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The lock file.
    public var path: String
    /// The holder's line from the lock file, such as `pid=1234 host=box since=…`.
    public var holder: String

    public init(path: String, holder: String) {
        self.path = path
        self.holder = holder
    }

    public var description: String { "\(path) is locked by \(holder)" }
}
