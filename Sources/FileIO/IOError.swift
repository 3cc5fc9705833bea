#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call on a file, with the operation, the path and the `errno`.
///
/// ```swift
/// do { try fs.removeFile("/store/x") }
/// catch let error as IOError where error.code == ENOENT { /* already gone */ }
/// ```
public struct IOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operation that failed, as the system call is named (`open`, `pwrite`, `fdatasync`).
    public var operation: String
    /// The file or directory it was applied to.
    public var path: String
    /// The `errno` value the call left.
    public var code: Int32

    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// Captures the current `errno`; call it right after the failing system call.
    public static func current(_ operation: String, _ path: String) -> IOError {
        IOError(operation: operation, path: path, code: errno)
    }

    /// True when the failure is about space: ENOSPC, or EDQUOT (a quota).
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }

    /// What a person can do about the failures they can do something about, in parentheses
    /// (for the end of a message), or "".
    public var advice: String {
        if isOutOfSpace { return " (the disk is full: free space and try again)" }
        switch code {
        case EROFS: return " (the file system is read-only: the store can be read, not changed)"
        case EACCES, EPERM: return " (permission denied: check the folder's owner and mode)"
        case ELOOP: return " (a symbolic link stands where the store's own file or folder belongs, and links are not followed: remove it)"
        case EMLINK: return " (the file has other names, hard links, so it is not the store's own: remove it)"
        case ENXIO: return " (not a regular file: a device, a pipe or a socket stands where the store's own file belongs; remove it)"
        default: return ""
        }
    }

    public var description: String {
        "\(operation) \(path): \(IOError.message(for: code)) (\(IOError.name(for: code)))"
    }

    /// The text the C library gives for an `errno` value.
    public static func message(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The symbolic name of the `errno` values storage code meets; the number for others.
    public static func name(for code: Int32) -> String {
        switch code {
        case ENOENT: "ENOENT"
        case EEXIST: "EEXIST"
        case EACCES: "EACCES"
        case EPERM: "EPERM"
        case EROFS: "EROFS"
        case ENOSPC: "ENOSPC"
        case EDQUOT: "EDQUOT"
        case EIO: "EIO"
        case EISDIR: "EISDIR"
        case ENOTDIR: "ENOTDIR"
        case ENOTEMPTY: "ENOTEMPTY"
        case EWOULDBLOCK: "EWOULDBLOCK"
        case EINVAL: "EINVAL"
        case EBADF: "EBADF"
        case EMFILE: "EMFILE"
        case ENAMETOOLONG: "ENAMETOOLONG"
        case ELOOP: "ELOOP"
        case EMLINK: "EMLINK"
        case ENXIO: "ENXIO"
        default: "errno \(code)"
        }
    }
}
