#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder of the real file system held by its descriptor (``PosixFileSystem/openFolder(_:)``):
/// each entry is one `fstatat` or `unlinkat` from it, which neither walks the path from the top
/// again nor follows a link at the entry's name.
final class DescriptorFolder: FolderHandle {
    let descriptor: Int32
    let path: String

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { _ = systemClose(descriptor) }

    func names() throws -> [String] {
        // fdopendir takes the descriptor it is given, and a copy would share its position:
        // the listing gets a descriptor of its own.
        let own = try retryingOnInterrupt("open", path) { openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        return try directoryNames(consuming: own, path: path)
    }

    func status(_ name: String) throws -> FileStatus? {
        try checkName(name)
        return try entryStatus(in: descriptor, name, path: Path.join(path, name))
    }

    func removeFile(_ name: String) throws {
        try checkName(name)
        guard unlinkat(descriptor, name, 0) == 0 else { throw IOError.current("unlink", Path.join(path, name)) }
    }
}

/// What is at `name` in the folder open at `folder`, or nil when nothing is; a symbolic link
/// there is not followed but refused (`ELOOP`). `path` names it in errors.
func entryStatus(in folder: Int32, _ name: String, path: String) throws -> FileStatus? {
    var info = stat()
    guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
        if errno == ENOENT || errno == ENOTDIR { return nil }
        throw IOError.current("stat", path)
    }
    if info.st_mode & S_IFMT == S_IFLNK { throw IOError(operation: "stat", path: path, code: ELOOP) }
    return FileStatus(info)
}

/// The names in the folder open at `descriptor` (which is closed), without `.` and `..`.
func directoryNames(consuming descriptor: Int32, path: String) throws -> [String] {
    guard let directory = fdopendir(descriptor) else {
        let error = IOError.current("opendir", path)
        _ = systemClose(descriptor)
        throw error
    }
    defer { closedir(directory) }
    var names: [String] = []
    // A directory entry is only as long as its name: never copy the whole `dirent` (that can
    // read past the end of the kernel's buffer); read the name in place.
    let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    while let entry = readdir(directory) {
        let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

extension FileStatus {
    /// What `stat` found: a link counts as `.other` (callers that refuse links check first).
    init(_ info: stat) {
        let kind: FileStatus.Kind = switch info.st_mode & S_IFMT {
        case S_IFREG: .file
        case S_IFDIR: .directory
        default: .other
        }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        self.init(
            kind: kind,
            size: Int64(info.st_size),
            modificationTime: .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec)),
            inode: UInt64(info.st_ino)
        )
    }
}
