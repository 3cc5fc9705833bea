#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import COpenBeneath
import Synchronization

/// A folder below which no symbolic link is followed: a path inside it is reached from a
/// descriptor of the folder, so a link planted anywhere below it, at a file or at a folder,
/// stops the call with `ELOOP` instead of leading out of it, and no rename of a folder between
/// two calls can redirect the second.
///
/// Why: whoever can write into a store folder (a shared disk, a synced folder, an unpacked
/// backup) must not be able to turn the store's writes into writes elsewhere, with the rights
/// of whoever runs `vt` (docs/SECURITY.md). The folder's own path is the caller's choice and
/// is followed as given, once: its descriptor is kept from the first call that finds it.
///
/// How: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` resolves a whole path in one
/// call; where the system lacks it, and to name the link when one is met, the path is walked
/// one name at a time with `openat(O_NOFOLLOW)`.
final class ConfinedFolder: Sendable {
    /// The folder, as given, without a trailing slash.
    let root: String
    /// The folder's descriptor, -1 until a call finds the folder.
    private let rootDescriptor = Mutex<Int32>(-1)

    /// False to walk every path a name at a time, as where `openat2` is missing (tests of
    /// both ways).
    let resolvesInOneCall: Bool

    init(_ root: String, resolvesInOneCall: Bool = true) {
        self.resolvesInOneCall = resolvesInOneCall
        var root = root
        while root.count > 1, root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    deinit {
        let descriptor = rootDescriptor.withLock { $0 }
        if descriptor >= 0 { _ = systemClose(descriptor) }
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
        (try? names(of: path)) != nil  // nil outside, and a path that climbs out is not inside
    }

    /// The folder's descriptor, opened on the first call (it stays open while this lives, and
    /// callers never close it).
    func descriptor() throws -> Int32 {
        try rootDescriptor.withLock { descriptor in
            if descriptor < 0 {
                descriptor = try retryingOnInterrupt("open", root) { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            }
            return descriptor
        }
    }

    /// Opens the folder at `names` below the root (the root itself when empty), following no
    /// link on the way; with `creating`, folders that are missing are made (mode 0755).
    /// The caller closes the descriptor.
    ///
    /// - Throws: ``IOError``: `ELOOP` naming the link, `ENOTDIR` naming a file where a folder
    ///   belongs, `ENOENT` naming the first folder missing.
    func openFolder(_ names: ArraySlice<String>, creating: Bool = false) throws -> Int32 {
        let root = try descriptor()
        if names.isEmpty { return try retryingOnInterrupt("open", self.root) { openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) } }
        if !creating, let opened = try openBeneath(names, O_RDONLY | O_DIRECTORY | O_CLOEXEC) { return opened }
        var current = root
        var walked = self.root
        for name in names {
            walked = Path.join(walked, name)
            let parent = current
            defer { if parent != root { _ = systemClose(parent) } }
            if creating, mkdirat(parent, name, 0o755) != 0, errno != EEXIST { throw IOError.current("mkdir", walked) }
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

    /// Opens the file or folder at `names` with `flags` (`O_NOFOLLOW` among them) in one call;
    /// nil when the system cannot, or when a link or a file stands on the way: the walk then
    /// finds which name it is, to say so.
    func openBeneath(_ names: ArraySlice<String>, _ flags: Int32, mode: UInt32 = 0o644) throws -> Int32? {
        guard resolvesInOneCall, Self.beneathWorks.load(ordering: .relaxed) else { return nil }
        let path = names.joined(separator: "/")
        let root = try descriptor()
        var raced = 0
        while true {
            let opened = vt_open_beneath(root, path, flags, mode)
            if opened >= 0 { return opened }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN:
                // A rename raced the lookup, and openat2 asks to try again; a file that answers
                // so every time (a lease, with O_NONBLOCK) is left to the walk.
                raced += 1
                if raced < 8 { continue }
                return nil
            case ELOOP, ENOTDIR, EXDEV: return nil
            case ENOSYS, EPERM:
                // No openat2 here (an old kernel, or a sandbox that filters it): walk from now on.
                Self.beneathWorks.store(false, ordering: .relaxed)
                return nil
            default: throw IOError(operation: "open", path: Path.join(self.root, path), code: code)
            }
        }
    }

    /// Whether `openat2` answers on this system (false after it once did not).
    private static let beneathWorks = Atomic(true)

    /// Runs `body` with a descriptor of the folder that holds the last of `names` (not empty),
    /// and that name.
    func inParent<T>(of names: [String], _ body: (Int32, String) throws -> T) throws -> T {
        precondition(!names.isEmpty, "the folder itself is reached as its caller named it")
        if names.count == 1 { return try body(try descriptor(), names[0]) }
        let descriptor = try openFolder(names.dropLast())
        defer { _ = systemClose(descriptor) }
        return try body(descriptor, names[names.count - 1])
    }
}

/// Checks what an open descriptor of a store's file is: a regular file, with no other name when
/// it is opened for writing (a hard link would let a write reach someone else's file).
///
/// - Returns: the file's size.
/// - Throws: ``IOError``: `EISDIR` for a folder, `ENXIO` for a device, a pipe or a socket,
///   `EMLINK` for a file with other names.
@discardableResult
func checkRegularFile(_ descriptor: Int32, path: String, forWriting: Bool) throws -> Int64 {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw IOError.current("fstat", path) }
    let kind = info.st_mode & S_IFMT
    if kind == S_IFDIR { throw IOError(operation: "open", path: path, code: EISDIR) }
    if kind != S_IFREG { throw IOError(operation: "open", path: path, code: ENXIO) }
    if forWriting, info.st_nlink > 1 { throw IOError(operation: "open", path: path, code: EMLINK) }
    return Int64(info.st_size)
}
