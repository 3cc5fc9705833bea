/// The small file-system interface that every durable write of the storage modules goes through.
///
/// Keeping it this narrow is what lets tests swap in an implementation that injects faults
/// (a failed `fsync`, a full disk, a torn write, writes lost at power cut) without the log or
/// the blob store knowing. ``PosixFileSystem`` is the real one.
///
/// ```swift
/// let fs: any FileSystem = PosixFileSystem()
/// let file = try fs.openFile("/tmp/x", .createNew)
/// try file.write([1, 2, 3], at: 0)
/// try file.sync()
/// ```
public protocol FileSystem: Sendable {
    /// Opens a regular file. Throws ``IOError`` (`ENOENT`, `EEXIST`, `EISDIR`, …).
    func openFile(_ path: String, _ mode: OpenMode) throws -> any RandomAccessFile
    /// Creates a directory and any missing parents; an existing directory is not an error.
    func createDirectory(_ path: String) throws
    /// The names in a directory, without `.` and `..`, in no particular order.
    func listDirectory(_ path: String) throws -> [String]
    /// What is at a path, or `nil` when nothing is.
    func status(_ path: String) throws -> FileStatus?
    /// Atomically replaces `destination` with `source` (POSIX `rename`).
    func rename(_ source: String, to destination: String) throws
    /// Removes a file (not a directory).
    func removeFile(_ path: String) throws
    /// Removes an empty directory (POSIX `rmdir`).
    func removeDirectory(_ path: String) throws
    /// Makes the directory's entries (creations, renames, removals) durable.
    func syncDirectory(_ path: String) throws
    /// Sets a file's modification time: to now when `time` is nil, else to `time` since 1970.
    func setModificationTime(_ path: String, to time: Duration?) throws
    /// Takes the exclusive lock kept in the file at `path` (created when missing) or fails at
    /// once, and writes `holder` into it so that a refused rival can name who holds it.
    ///
    /// - Throws: ``LockHeldError`` naming the holder; ``IOError`` when the file cannot be used.
    func lock(_ path: String, holder: String) throws -> any HeldLock

    /// Whether a reader may read ahead on another thread while its caller goes on with other
    /// calls. True unless callers rely on every call coming in one known order (the test file
    /// systems that fail, or cut the power at, the Nth call).
    var allowsReadAhead: Bool { get }

    /// A whole file's bytes mapped into memory for reading (``MappedFile``), or nil when this
    /// file system reads only through ``openFile(_:_:)`` (the test file systems, whose calls
    /// are counted and faulted there). Only for files that are replaced by renaming and never
    /// written in place: see ``MappedFile``.
    func mapForReading(_ path: String) throws -> MappedFile?

    /// This file system, following no symbolic link below `folder` (``PosixFileSystem``); the
    /// test file systems, whose files live in memory or under a test's own folder, return
    /// themselves. Storage code confines its file system to the folder it owns when it opens.
    func confined(to folder: String) -> any FileSystem

    /// The folder at `path`, held open while many of its entries are handled
    /// (``FolderHandle``). The test file systems go by paths, through their own calls.
    func openFolder(_ path: String) throws -> any FolderHandle
}

extension FileSystem {
    public var allowsReadAhead: Bool { true }
    public func confined(to folder: String) -> any FileSystem { self }
    public func openFolder(_ path: String) throws -> any FolderHandle { try PathFolder(fileSystem: self, path: path) }
    public func mapForReading(_ path: String) throws -> MappedFile? { nil }
}

/// A lock taken with ``FileSystem/lock(_:holder:)``; it is released by ``release()`` or when
/// the owner goes away (even killed).
public protocol HeldLock: AnyObject, Sendable {
    func release()
}

/// How ``FileSystem/openFile(_:_:)`` opens a file.
public enum OpenMode: Sendable, Hashable {
    /// Reading only; the file must exist.
    case readOnly
    /// Reading and writing; the file must exist.
    case readWrite
    /// Reading and writing a new file; fails with `EEXIST` when the path is taken.
    case createNew
    /// Reading and writing, creating the file when missing and emptying it when present.
    case createOrTruncate
}

/// The kind, size and modification time of a path, and which file it is.
public struct FileStatus: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case file, directory, other }
    public var kind: Kind
    public var size: Int64
    /// Seconds and nanoseconds since 1970, as the file system keeps them.
    public var modificationTime: Duration
    /// The file's inode number, where the file system has one (nil in the tests' simulated
    /// disks): a file renamed over another under its name is another inode, even when a copy
    /// kept the size and the modification time.
    public var inode: UInt64?

    public init(kind: Kind, size: Int64, modificationTime: Duration, inode: UInt64? = nil) {
        self.kind = kind
        self.size = size
        self.modificationTime = modificationTime
        self.inode = inode
    }
}

/// An open file read and written at explicit offsets (`pread`/`pwrite`), never at a cursor, so
/// one handle can serve a writer and a reader without seeking.
///
/// An instance belongs to one owner at a time; it is not safe for concurrent mutation.
public protocol RandomAccessFile: AnyObject {
    /// The path it was opened at, for error messages.
    var path: String { get }
    /// Reads up to `buffer.count` bytes at `offset`; returns fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
    /// Writes all of `bytes` at `offset`, or throws; a partial write is reported as an error.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws
    /// The file's current size in bytes.
    func size() throws -> Int64
    /// Cuts (or extends with zeros) the file to `size` bytes.
    func truncate(to size: Int64) throws
    /// Makes the file's data durable: `fdatasync` on Linux, `F_FULLFSYNC` on Apple systems.
    func sync() throws
    /// Releases the descriptor. Further calls throw `EBADF`.
    func close() throws
}

extension RandomAccessFile {
    /// Writes an array's bytes at `offset`.
    public func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads up to `count` bytes at `offset`; the result is shorter only at the end of the file.
    public func read(count: Int, at offset: Int64) throws -> [UInt8] {
        // Not zeroed first: a snapshot is 20 MB, and writing zeros over it before the read
        // cost a pass over the memory (docs/BENCHMARKS.md). Only the bytes read are kept.
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
        }
    }

    /// Reads the whole file.
    public func readAll() throws -> [UInt8] {
        try read(count: Int(try size()), at: 0)
    }

    /// Reads the whole file into `buffer`, reusing its memory when it is large enough: a
    /// 20 MB snapshot read into fresh memory spent most of its read in page faults, 5 ms
    /// instead of 1 (docs/BENCHMARKS.md). Afterwards `buffer` holds the file's bytes, no more.
    public func readAll(into buffer: inout [UInt8]) throws {
        let size = Int(try size())
        guard buffer.capacity >= size else {
            buffer = []
            buffer = try read(count: size, at: 0)
            return
        }
        if buffer.count < size {
            buffer.append(contentsOf: repeatElement(0, count: size - buffer.count))
        } else {
            buffer.removeLast(buffer.count - size)
        }
        let count = try buffer.withUnsafeMutableBytes { try read(into: $0, at: 0) }
        buffer.removeLast(size - count)
    }
}

extension FileSystem {
    /// Creates a directory and any missing parents so that they survive a power cut: the
    /// parent of each directory made is synced (a new name is durable only once its directory
    /// is). Storage code makes its folders this way.
    public func createDirectoryDurably(_ path: String) throws {
        var missing: [String] = []
        var current = path
        while try status(current) == nil {
            missing.append(current)
            let parent = Path.directory(of: current)
            if parent == current || parent == "." { break }
            current = parent
        }
        try createDirectory(path)
        for directory in missing.reversed() { try syncDirectory(Path.directory(of: directory)) }
    }

    /// Removes `path` and everything under it, deepest first. The removals are durable once
    /// the caller syncs `path`'s parent.
    public func removeTree(_ path: String) throws {
        guard let status = try status(path) else { return }
        guard status.kind == .directory else { return try removeFile(path) }
        for name in try listDirectory(path) { try removeTree(Path.join(path, name)) }
        try removeDirectory(path)
    }

    /// True when something exists at `path`.
    public func exists(_ path: String) throws -> Bool { try status(path) != nil }

    /// Replaces the file at `path` with `bytes` so that a crash leaves either the old content
    /// or the new, never a mix: write a temporary file, sync it, rename it over `path`, sync the
    /// directory. The temporary file is `path.tmp`, or `temporary` when given (a unique name,
    /// for writers that may write the same path at once); it is removed if a step before the
    /// rename fails.
    public func writeAtomically(_ bytes: [UInt8], to path: String, through temporary: String? = nil) throws {
        let temporaryPath = temporary ?? path + ".tmp"
        do {
            let file = try openFile(temporaryPath, temporary == nil ? .createOrTruncate : .createNew)
            do {
                try file.write(bytes, at: 0)
                try file.sync()
                try file.close()
            } catch {
                try? file.close()
                throw error
            }
            try rename(temporaryPath, to: path)
        } catch {
            try? removeFile(temporaryPath)
            throw error
        }
        try syncDirectory(Path.directory(of: path))
    }
}

/// String path helpers; the storage core avoids Foundation's URL on its hot paths.
public enum Path {
    /// `a/b` + `c` → `a/b/c`.
    public static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The directory part of a path: `a/b/c` → `a/b`, `c` → `.`, `/c` → `/`.
    public static func directory(of path: String) -> String {
        // Through the bytes: "/" is one byte in UTF-8 and never inside another character's, and
        // looking at characters costs several times as much on paths the stores split often.
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component: `a/b/c` → `c`.
    public static func name(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }
}
