import FileIO
import Foundation

/// The real file system with a count of every operation and a rule that can fail any of them,
/// as a full disk or a failing drive would.
public final class InstrumentedFileSystem: FileSystem, @unchecked Sendable {
    /// Calls come in one order, so that a test can fail or cut the power at the Nth.
    public var allowsReadAhead: Bool { false }
    private let real = PosixFileSystem()

    public init() {}
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    /// Given (operation, path, how many times this operation has run on files with this
    /// path's extension, this one included), an errno to fail with, or nil to proceed.
    public var failure: (@Sendable (String, String, Int) -> Int32?)? {
        get { lock.withLock { _failure } }
        set { lock.withLock { _failure = newValue } }
    }
    private var _failure: (@Sendable (String, String, Int) -> Int32?)?

    public func count(_ operation: String, _ fileExtension: String) -> Int {
        lock.withLock { counts["\(operation) \(fileExtension)"] ?? 0 }
    }

    /// Returns once `operation` has been called `count` times on files with this extension:
    /// a test waits for the call as an event.
    public func reached(_ operation: String, _ fileExtension: String, count: Int) async {
        let key = "\(operation) \(fileExtension)"
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if counts[key, default: 0] >= count { return true }
                waiters.append((key, count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
    private var waiters: [(key: String, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Bytes every read so far returned.
    public var bytesRead: Int { lock.withLock { _bytesRead } }
    private var _bytesRead = 0
    /// Reads made so far.
    public var reads: Int { lock.withLock { _reads } }
    private var _reads = 0
    func noteRead(_ count: Int) {
        lock.withLock {
            _bytesRead += count
            _reads += 1
        }
    }

    public func check(_ operation: String, _ path: String) throws {
        let ext = path.split(separator: ".").last.map(String.init) ?? ""
        let key = "\(operation) \(ext)"
        let (rule, n, due): ((@Sendable (String, String, Int) -> Int32?)?, Int, [CheckedContinuation<Void, Never>]) = lock.withLock {
            counts[key, default: 0] += 1
            let n = counts[key]!
            let due = waiters.filter { $0.key == key && $0.count <= n }.map(\.continuation)
            if !due.isEmpty { waiters.removeAll { $0.key == key && $0.count <= n } }
            return (_failure, n, due)
        }
        for continuation in due { continuation.resume() }
        if let code = rule?(operation, path, n) { throw IOError(operation: operation, path: path, code: code) }
    }

    public func openFile(_ path: String, _ mode: OpenMode) throws -> any RandomAccessFile {
        try check("open", path)
        return InstrumentedFile(try real.openFile(path, mode), owner: self)
    }
    public func createDirectory(_ path: String) throws { try check("mkdir", path); try real.createDirectory(path) }
    public func listDirectory(_ path: String) throws -> [String] { try real.listDirectory(path) }
    public func status(_ path: String) throws -> FileStatus? { try real.status(path) }
    public func rename(_ source: String, to destination: String) throws {
        try check("rename", destination)
        try real.rename(source, to: destination)
    }
    public func removeFile(_ path: String) throws { try check("unlink", path); try real.removeFile(path) }
    public func removeDirectory(_ path: String) throws { try check("rmdir", path); try real.removeDirectory(path) }
    public func syncDirectory(_ path: String) throws { try check("syncdir", path); try real.syncDirectory(path) }
    public func lock(_ path: String, holder: String) throws -> any HeldLock {
        try check("lock", path)
        return try real.lock(path, holder: holder)
    }
    public func setModificationTime(_ path: String, to time: Duration?) throws {
        try check("utimensat", path)
        try real.setModificationTime(path, to: time)
    }
}

public final class InstrumentedFile: RandomAccessFile {
    let inner: any RandomAccessFile
    unowned let owner: InstrumentedFileSystem
    init(_ inner: any RandomAccessFile, owner: InstrumentedFileSystem) {
        self.inner = inner
        self.owner = owner
    }
    public var path: String { inner.path }
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = try inner.read(into: buffer, at: offset)
        owner.noteRead(count)
        return count
    }
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try owner.check("write", path)
        try inner.write(bytes, at: offset)
    }
    public func size() throws -> Int64 { try inner.size() }
    public func truncate(to size: Int64) throws { try owner.check("truncate", path); try inner.truncate(to: size) }
    public func sync() throws { try owner.check("sync", path); try inner.sync() }
    public func close() throws { try inner.close() }
}

