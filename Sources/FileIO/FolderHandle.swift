#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder held open while many of its entries are handled: each entry is reached by its name
/// from the folder, one lookup, not by a path walked from the top. What a scan of a fan-out
/// folder of photos needs (a listing, then a `stat` and an `unlink` per file) costs no more
/// under a ``PosixFileSystem`` confined to its store than a plain path would.
///
/// Names are single names (no `/`, not `.` or `..`); a link at a name is not followed.
public protocol FolderHandle: AnyObject {
    /// The folder's path, for messages.
    var path: String { get }
    /// The names in the folder, without `.` and `..`, in no particular order.
    func names() throws -> [String]
    /// What is at `name`, or nil when nothing is. Throws `ELOOP` for a symbolic link.
    func status(_ name: String) throws -> FileStatus?
    /// Removes the file at `name` (not a folder).
    func removeFile(_ name: String) throws
}

extension FolderHandle {
    /// Refuses what is not one name of this folder: such a name would reach elsewhere.
    func checkName(_ name: String) throws {
        // By bytes: a scan checks every name, and Character iteration cost 6 % of a collection.
        if name.isEmpty || name == "." || name == ".." || name.utf8.contains(UInt8(ascii: "/")) {
            throw IOError(operation: "resolve", path: Path.join(path, name), code: EINVAL)
        }
    }
}

/// A folder handled through its file system's path calls: what the test file systems use, so
/// that their faults and counts see every call.
final class PathFolder: FolderHandle {
    let fileSystem: any FileSystem
    let path: String

    init(fileSystem: any FileSystem, path: String) throws {
        self.fileSystem = fileSystem
        self.path = path
    }

    func names() throws -> [String] { try fileSystem.listDirectory(path) }

    func status(_ name: String) throws -> FileStatus? {
        try checkName(name)
        return try fileSystem.status(Path.join(path, name))
    }

    func removeFile(_ name: String) throws {
        try checkName(name)
        try fileSystem.removeFile(Path.join(path, name))
    }
}
