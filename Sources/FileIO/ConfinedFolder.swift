#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder below which no symbolic link is followed: a path inside it is reached one name at
/// a time from a descriptor of the folder (`openat` with `O_NOFOLLOW`), so a link planted
/// anywhere below it, at a file or at a folder, stops the call with `ELOOP` instead of leading
/// out of it, and no rename of a folder between two calls can redirect the second.
///
/// Why: whoever can write into a store folder (a shared disk, a synced folder, an unpacked
/// backup) must not be able to turn the store's writes into writes elsewhere, with the rights
/// of whoever runs `vt` (docs/SECURITY.md). The folder's own path is the caller's choice and
/// is followed as given.
struct ConfinedFolder: Sendable, Hashable {
    /// The folder, as given, without a trailing slash.
    let root: String

    init(_ root: String) {
        var root = root
        while root.count > 1, root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    /// The names from the folder down to `path`, or nil when `path` is not inside it.
    ///
    /// - Throws: ``IOError`` `EINVAL` for a path that climbs out with `..`.
    func names(of path: String) throws -> [String]? {
        let prefix = root == "/" ? "/" : root + "/"
        guard path == root || path.hasPrefix(prefix) else { return nil }
        let names = path.dropFirst(prefix.count).split(separator: "/").filter { $0 != "." }.map(String.init)
        if names.contains("..") { throw IOError(operation: "resolve", path: path, code: EINVAL) }
        return path == root ? [] : names
    }

    /// Whether `path` is the folder or inside it.
    func contains(_ path: String) -> Bool {
        guard let names = try? names(of: path) else { return false }
        return names != nil
    }

    /// Opens the folder at `names` below the root (the root itself when empty), following no
    /// link on the way; with `creating`, folders that are missing are made (mode 0755).
    /// The caller closes the descriptor.
    ///
    /// - Throws: ``IOError``: `ELOOP` naming the link, `ENOTDIR` naming a file where a folder
    ///   belongs, `ENOENT` naming the first folder missing.
    func openFolder(_ names: ArraySlice<String>, creating: Bool = false) throws -> Int32 {
        var current = try retryingOnInterrupt("open", root) { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        var walked = root
        for name in names {
            walked = Path.join(walked, name)
            if creating, mkdirat(current, name, 0o755) != 0, errno != EEXIST {
                let error = IOError.current("mkdir", walked)
                _ = systemClose(current)
                throw error
            }
            let parent = current
            defer { _ = systemClose(parent) }
            do {
                current = try retryingOnInterrupt("open", walked) {
                    openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
            } catch let error as IOError where error.code == ENOTDIR {
                // Linux says ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW: name it.
                var info = stat()
                let isLink = fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFLNK
                throw isLink ? IOError(operation: "open", path: walked, code: ELOOP) : error
            }
        }
        return current
    }

    /// Runs `body` with a descriptor of the folder that holds the last of `names` (not empty),
    /// and that name.
    func inParent<T>(of names: [String], _ body: (Int32, String) throws -> T) throws -> T {
        precondition(!names.isEmpty, "the folder itself is reached as its caller named it")
        let descriptor = try openFolder(names.dropLast())
        defer { _ = systemClose(descriptor) }
        return try body(descriptor, names[names.count - 1])
    }
}

/// Checks what an open descriptor of a store's file is: a regular file, with no other name when
/// it is opened for writing (a hard link would let a write reach someone else's file).
///
/// - Throws: ``IOError``: `EISDIR` for a folder, `ENXIO` for a device, a pipe or a socket,
///   `EMLINK` for a file with other names.
func checkRegularFile(_ descriptor: Int32, path: String, forWriting: Bool) throws {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw IOError.current("fstat", path) }
    let kind = info.st_mode & S_IFMT
    if kind == S_IFDIR { throw IOError(operation: "open", path: path, code: EISDIR) }
    if kind != S_IFREG { throw IOError(operation: "open", path: path, code: ENXIO) }
    if forWriting, info.st_nlink > 1 { throw IOError(operation: "open", path: path, code: EMLINK) }
}
