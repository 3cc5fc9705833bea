#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system, through POSIX calls.
///
/// Durability: ``RandomAccessFile/sync()`` is `fdatasync` on Linux and `fcntl(F_FULLFSYNC)` on
/// Apple systems (plain `fsync` there only reaches the drive's cache); directories are synced
/// with `fsync` on a descriptor opened on the directory.
///
/// Links: a file is never opened through a symbolic link at its own name (`O_NOFOLLOW`), nor
/// when it is not a regular file, nor for writing when it has other names (hard links). Once
/// ``confined(to:)`` a folder, nothing below that folder follows a link at any name on the way
/// (``ConfinedFolder``): the stores, logs and blob folders confine their file system to
/// themselves when they open.
public struct PosixFileSystem: FileSystem {
    /// The folder below which no link is followed, when confined.
    let confinement: ConfinedFolder?

    public init() { confinement = nil }

    /// A file system that follows no symbolic link below `folder` (the folder's own path is
    /// followed as given). Confining one already confined keeps the outer folder when `folder`
    /// is inside it.
    public func confined(to folder: String) -> any FileSystem {
        if let confinement, confinement.contains(folder) { return self }
        return PosixFileSystem(confinement: ConfinedFolder(folder))
    }

    private init(confinement: ConfinedFolder) { self.confinement = confinement }

    /// Confined to `folder`, walking every path a name at a time as where `openat2` is
    /// missing: for tests of that way.
    init(confinedTo folder: String, walkingEachName: Bool) {
        confinement = ConfinedFolder(folder, resolvesInOneCall: !walkingEachName)
    }

    /// The names of `path` below the confined folder, or nil when it is outside, is the
    /// folder itself (reached as its caller named it), or nothing is confined.
    private func confinedNames(_ path: String) throws -> [String]? {
        guard let names = try confinement?.names(of: path), !names.isEmpty else { return nil }
        return names
    }

    public func openFile(_ path: String, _ mode: OpenMode) throws -> any RandomAccessFile {
        // O_TRUNC waits until the file is known to be the store's own; O_NONBLOCK keeps a
        // planted pipe from blocking the open (it changes nothing for a regular file).
        let flags: Int32 = switch mode {
        case .readOnly: O_RDONLY
        case .readWrite, .createOrTruncate: O_RDWR
        case .createNew: O_RDWR | O_CREAT | O_EXCL
        }
        let creates: Int32 = mode == .createOrTruncate ? O_CREAT : 0
        let descriptor = try openDescriptor(path, flags | creates)
        do {
            let size = try checkRegularFile(descriptor, path: path, forWriting: mode != .readOnly)
            // Only a file with bytes is emptied, as O_TRUNC does: ext4 takes a truncation to
            // zero as a rewrite in place and writes the file back at its close (auto_da_alloc),
            // which made 100,000 files laid out this way take 8 times as long to delete.
            if mode == .createOrTruncate, size > 0 {
                while ftruncate(descriptor, 0) != 0 {
                    if errno != EINTR { throw IOError.current("ftruncate", path) }
                }
            }
        } catch {
            _ = systemClose(descriptor)
            throw error
        }
        return PosixFile(descriptor: descriptor, path: path)
    }

    /// Opens `path` with `flags` plus `O_NOFOLLOW`, `O_NONBLOCK` and `O_CLOEXEC`, below the
    /// confined folder one name at a time.
    func openDescriptor(_ path: String, _ flags: Int32) throws -> Int32 {
        let all = flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        guard let names = try confinedNames(path) else {
            return try retryingOnInterrupt("open", path) { open(path, all, 0o644) }
        }
        if let opened = try confinement!.openBeneath(names[...], all) { return opened }
        return try confinement!.inParent(of: names) { folder, name in
            try retryingOnInterrupt("open", path) { openat(folder, name, all, 0o644) }
        }
    }

    public func createDirectory(_ path: String) throws {
        if let confinement, let names = try confinedNames(path) {
            try plainCreateDirectory(confinement.root)
            _ = systemClose(try confinement.openFolder(names[...], creating: true))
            return
        }
        try plainCreateDirectory(path)
    }

    private func plainCreateDirectory(_ path: String) throws {
        if let existing = try status(path) {
            guard existing.kind == .directory else { throw IOError(operation: "mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = Path.directory(of: path)
        if parent != path, parent != ".", parent != "/" { try plainCreateDirectory(parent) }
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw IOError.current("mkdir", path) }
    }

    public func listDirectory(_ path: String) throws -> [String] {
        let descriptor: Int32
        if let confinement, let names = try confinedNames(path) {
            descriptor = try confinement.openFolder(names[...])
        } else {
            descriptor = try retryingOnInterrupt("open", path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        return try directoryNames(consuming: descriptor, path: path)
    }

    /// Below the confined folder, a link is not followed: it is an error (`ELOOP`) naming it,
    /// wherever it stands on the way.
    public func status(_ path: String) throws -> FileStatus? {
        if let confinement, let names = try confinedNames(path) {
            do {
                return try confinement.inParent(of: names) { folder, name in try entryStatus(in: folder, name, path: path) }
            } catch let error as IOError where error.code == ENOENT || error.code == ENOTDIR {
                return nil  // a folder on the way is missing
            }
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw IOError.current("stat", path)
        }
        return FileStatus(info)
    }

    /// rename(2) replaces a link at `destination`, never what it points to.
    public func rename(_ source: String, to destination: String) throws {
        if let confinement, let from = try confinedNames(source), let to = try confinedNames(destination) {
            try confinement.inParent(of: from) { fromFolder, fromName in
                try confinement.inParent(of: to) { toFolder, toName in
                    guard renameat(fromFolder, fromName, toFolder, toName) == 0 else {
                        throw IOError.current("rename", "\(source) -> \(destination)")
                    }
                }
            }
            return
        }
        guard systemRename(source, destination) == 0 else {
            throw IOError.current("rename", "\(source) -> \(destination)")
        }
    }

    public func removeFile(_ path: String) throws {
        try unlinking(path, flags: 0, operation: "unlink")
    }

    public func removeDirectory(_ path: String) throws {
        try unlinking(path, flags: AT_REMOVEDIR, operation: "rmdir")
    }

    private func unlinking(_ path: String, flags: Int32, operation: String) throws {
        if let confinement, let names = try confinedNames(path) {
            try confinement.inParent(of: names) { folder, name in
                guard unlinkat(folder, name, flags) == 0 else { throw IOError.current(operation, path) }
            }
            return
        }
        guard unlinkat(AT_FDCWD, path, flags) == 0 else { throw IOError.current(operation, path) }
    }

    public func setModificationTime(_ path: String, to time: Duration?) throws {
        var times = [timespec(), timespec()]
        // Access time is left alone; the modification time is set.
        times[0].tv_nsec = utimeOmit
        if let time {
            let (seconds, attoseconds) = time.components
            times[1].tv_sec = Int(seconds)
            times[1].tv_nsec = Int(attoseconds / 1_000_000_000)
        } else {
            times[1].tv_nsec = utimeNow
        }
        if let confinement, let names = try confinedNames(path) {
            try confinement.inParent(of: names) { folder, name in
                guard utimensat(folder, name, times, AT_SYMLINK_NOFOLLOW) == 0 else { throw IOError.current("utimensat", path) }
            }
            return
        }
        guard utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0 else { throw IOError.current("utimensat", path) }
    }

    /// Below the confined folder, the folder is reached as every path is (no link on the way),
    /// and its entries are then reached from its descriptor.
    public func openFolder(_ path: String) throws -> any FolderHandle {
        let descriptor: Int32
        if let confinement, let names = try confinedNames(path) {
            descriptor = try confinement.openFolder(names[...])
        } else {
            descriptor = try retryingOnInterrupt("open", path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        return DescriptorFolder(descriptor: descriptor, path: path)
    }

    public func lock(_ path: String, holder: String) throws -> any HeldLock {
        try FileLock.acquire(descriptor: openDescriptor(path, O_RDWR | O_CREAT), path: path, holder: holder)
    }

    public func syncDirectory(_ path: String) throws {
        let descriptor: Int32
        if let confinement, let names = try confinedNames(path) {
            descriptor = try confinement.openFolder(names[...])
        } else {
            descriptor = try retryingOnInterrupt("open", path) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        defer { _ = systemClose(descriptor) }
        guard fsync(descriptor) == 0 else { throw IOError.current("fsync", path) }
    }
}

// UTIME_NOW and UTIME_OMIT are C expression macros, which Swift does not import.
#if canImport(Darwin)
let utimeNow = -1
let utimeOmit = -2
#else
let utimeNow = (1 << 30) - 1
let utimeOmit = (1 << 30) - 2
#endif

/// Runs a call that returns a descriptor or -1, retrying when a signal interrupted it.
func retryingOnInterrupt(_ operation: String, _ path: String, _ call: () -> Int32) throws -> Int32 {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno != EINTR { throw IOError.current(operation, path) }
    }
}

// The module's own names (`close`, `rename`) shadow the C functions inside the types above.
@inline(__always) func systemClose(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) func systemRename(_ a: String, _ b: String) -> Int32 { rename(a, b) }
