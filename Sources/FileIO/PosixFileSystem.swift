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
public struct PosixFileSystem: FileSystem {
    public init() {}

    public func openFile(_ path: String, _ mode: OpenMode) throws -> any RandomAccessFile {
        let flags: Int32 = switch mode {
        case .readOnly: O_RDONLY
        case .readWrite: O_RDWR
        case .createNew: O_RDWR | O_CREAT | O_EXCL
        case .createOrTruncate: O_RDWR | O_CREAT | O_TRUNC
        }
        let descriptor = try retryingOnInterrupt("open", path) { open(path, flags | O_CLOEXEC, 0o644) }
        var info = stat()
        if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            _ = systemClose(descriptor)
            throw IOError(operation: "open", path: path, code: EISDIR)
        }
        return PosixFile(descriptor: descriptor, path: path)
    }

    public func createDirectory(_ path: String) throws {
        if let existing = try status(path) {
            guard existing.kind == .directory else { throw IOError(operation: "mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = Path.directory(of: path)
        if parent != path, parent != ".", parent != "/" { try createDirectory(parent) }
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw IOError.current("mkdir", path) }
    }

    public func listDirectory(_ path: String) throws -> [String] {
        guard let directory = opendir(path) else { throw IOError.current("opendir", path) }
        defer { closedir(directory) }
        var names: [String] = []
        // A directory entry is only as long as its name: never copy the whole `dirent` (that
        // can read past the end of the kernel's buffer); read the name in place.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(directory) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    public func status(_ path: String) throws -> FileStatus? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw IOError.current("stat", path)
        }
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
        return FileStatus(
            kind: kind,
            size: Int64(info.st_size),
            modificationTime: .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
        )
    }

    public func rename(_ source: String, to destination: String) throws {
        guard systemRename(source, destination) == 0 else {
            throw IOError.current("rename", "\(source) -> \(destination)")
        }
    }

    public func removeFile(_ path: String) throws {
        guard unlink(path) == 0 else { throw IOError.current("unlink", path) }
    }

    public func removeDirectory(_ path: String) throws {
        guard rmdir(path) == 0 else { throw IOError.current("rmdir", path) }
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
        guard utimensat(AT_FDCWD, path, times, 0) == 0 else { throw IOError.current("utimensat", path) }
    }

    public func lock(_ path: String, holder: String) throws -> any HeldLock {
        try FileLock.acquire(at: path, holder: holder)
    }

    public func syncDirectory(_ path: String) throws {
        let descriptor = try retryingOnInterrupt("open", path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { _ = systemClose(descriptor) }
        guard fsync(descriptor) == 0 else { throw IOError.current("fsync", path) }
    }
}

/// An open descriptor. `close` is idempotent in effect: after it, every call throws `EBADF`.
final class PosixFile: RandomAccessFile {
    let path: String
    private var descriptor: Int32

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    private func open() throws -> Int32 {
        guard descriptor >= 0 else { throw IOError(operation: "use", path: path, code: EBADF) }
        return descriptor
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let fd = try open()
        var done = 0
        while done < buffer.count {
            let got = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw IOError.current("pread", path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let fd = try open()
        var done = 0
        while done < bytes.count {
            let put = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if put < 0 {
                if errno == EINTR { continue }
                throw IOError.current("pwrite", path)
            }
            done += put
        }
    }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(try open(), &info) == 0 else { throw IOError.current("fstat", path) }
        return Int64(info.st_size)
    }

    func truncate(to size: Int64) throws {
        let fd = try open()
        while ftruncate(fd, off_t(size)) != 0 {
            if errno != EINTR { throw IOError.current("ftruncate", path) }
        }
    }

    func sync() throws {
        let fd = try open()
        #if canImport(Darwin)
        // F_FULLFSYNC asks the drive to flush its cache; some file systems refuse it, and then
        // fsync is the best that exists.
        if fcntl(fd, F_FULLFSYNC) == 0 { return }
        guard fsync(fd) == 0 else { throw IOError.current("fsync", path) }
        #else
        while fdatasync(fd) != 0 {
            if errno != EINTR { throw IOError.current("fdatasync", path) }
        }
        #endif
    }

    func close() throws {
        guard descriptor >= 0 else { return }
        let fd = descriptor
        descriptor = -1
        // close(2) must not be retried on EINTR (the descriptor is gone either way on Linux).
        if systemClose(fd) != 0, errno != EINTR { throw IOError.current("close", path) }
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
