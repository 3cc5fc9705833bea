import FileIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A file system held in memory that knows which of its bytes and names a disk would keep if
/// the power went now, so a test can cut the power at any I/O operation, fail any one of them,
/// and open what survives.
///
/// The model is the one POSIX promises and no more: a file's writes are durable once the file
/// is synced; a name (a creation, a rename, a removal, a new directory) is durable once its
/// directory is synced; a rename is atomic. Everything else may or may not survive, and
/// ``afterPowerLoss(_:seed:)`` chooses how (SQLite's crash tests model disks the same way).
public final class SimulatedDisk: FileSystem, @unchecked Sendable {
    /// Calls come in one order, so that a test can fail or cut the power at the Nth.
    public var allowsReadAhead: Bool { false }
    /// What a power cut keeps of the writes and name changes that were not yet synced.
    public enum PowerLoss: String, Sendable, CaseIterable {
        /// All of them: the process died, the machine did not (kill -9).
        case keepEverything
        /// None of them.
        case loseUnsynced
        /// All of them, but the last write only in part (a torn write).
        case tearLastWrite
        /// A random subset, so a later write can survive an earlier one (reordering).
        case reorderUnsynced
    }

    /// One mutating call, as a failure rule sees it.
    public struct Operation: Sendable, CustomStringConvertible {
        public enum Kind: String, Sendable { case create, write, truncate, sync, syncDirectory, rename, remove, makeDirectory }
        public var kind: Kind
        public var path: String
        /// Its place among all mutating calls (from 1).
        public var number: Int
        /// Its place among the calls of its kind (from 1).
        public var numberOfKind: Int
        public var description: String { "\(kind) #\(numberOfKind) (I/O #\(number)) \(path)" }

        /// Whether this writes a key summary or a tail checkpoint, or removes a used checkpoint
        /// (FORMAT.md, "Key summaries", "Tail checkpoint"): derived data whose failed write is
        /// swallowed by design: a missing one costs only time, and a checkpoint left behind is
        /// used only while the segment's data still ends where it says, which makes it right.
        public var isDerivedFileWrite: Bool {
            if path.hasSuffix(".head") || path.hasSuffix(".head.tmp") { return true }
            return kind != .remove && (path.hasSuffix(".keys") || path.hasSuffix(".keys.tmp"))
        }
    }

    final class Inode {
        var data: [UInt8]
        /// The bytes as of the last sync.
        var durable: [UInt8]
        var pending: [(order: Int, change: Change)] = []
        var modificationTime: Duration
        init(_ data: [UInt8], time: Duration) {
            self.data = data
            self.durable = data
            self.modificationTime = time
        }
    }
    enum Change {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)
    }
    enum Node {
        case file(Inode)
        case directory
    }
    /// A path's new target (nil: removed), part of one atomic name operation.
    struct NameChange {
        var operation: Int
        var path: String
        var node: Node?
        /// The directory whose sync makes the change durable: the path's parent, or for a name
        /// under a renamed directory, the parent of that directory.
        var directory: String
    }

    private let mutex = NSLock()
    private var names: [String: Node]
    private var durableNames: [String: Node]
    private var pendingNames: [NameChange] = []
    private var order = 0
    private var operations = 0
    private var operationsByKind: [Operation.Kind: Int] = [:]
    private var cutAt: Int?
    private var dead = false
    private var rule: (@Sendable (Operation) -> Int32?)?
    /// Held locks by path: the holder's line and the lock's number.
    private var locks: [String: (holder: String, id: Int)] = [:]
    private var lockCount = 0
    private var failed: [Operation] = []
    private let roots: Set<String>

    /// A new disk holding one empty, durable directory: `root`.
    public init(root: String) {
        roots = [root]
        names = [root: .directory]
        durableNames = names
    }

    private init(names: [String: Node], roots: Set<String>) {
        self.names = names
        self.roots = roots
        durableNames = names
    }

    /// The power goes at the `operation`-th mutating call (it does not happen, nor does any
    /// later call: each throws `EIO`, as a dead machine would).
    public func cutPower(atOperation operation: Int) { mutex.withLock { cutAt = operation } }

    /// Fails the calls for which `rule` gives an errno; the rest proceed.
    public func fail(when rule: (@Sendable (Operation) -> Int32?)?) { mutex.withLock { self.rule = rule } }

    /// How many mutating calls have been made (a power cut's cannot happen past this).
    public var operationCount: Int { mutex.withLock { operations } }

    /// How many mutating calls of this kind have been made.
    public func count(of kind: Operation.Kind) -> Int { mutex.withLock { operationsByKind[kind] ?? 0 } }

    /// The calls the failure rule failed.
    public var failedOperations: [Operation] { mutex.withLock { failed } }

    /// Whether the power has been cut.
    public var isDead: Bool { mutex.withLock { dead } }

    /// Every file under `folder` with its current bytes, by path relative to it.
    public func files(under folder: String) -> [String: [UInt8]] {
        mutex.withLock {
            var files: [String: [UInt8]] = [:]
            for (path, node) in names where path.hasPrefix(folder + "/") {
                if case .file(let inode) = node { files[String(path.dropFirst(folder.count + 1))] = inode.data }
            }
            return files
        }
    }

    /// Replaces a file's bytes, as damage would, or puts a new file into an existing folder,
    /// as if written and synced long ago: durable, and no I/O is counted.
    public func overwrite(_ path: String, with bytes: [UInt8]) {
        mutex.withLock {
            switch names[path] {
            case .file(let inode)?:
                inode.data = bytes
                inode.durable = bytes
                inode.pending = []
            case nil:
                guard case .directory? = names[Path.directory(of: path)] else { return }
                names[path] = .file(Inode(bytes, time: Self.now()))
                durableNames[path] = names[path]
            case .directory?:
                return
            }
        }
    }

    /// What a disk would hold after the power went now, chosen by `loss` (and `seed`, for the
    /// random choices), as a new disk on which no lock is held.
    public func afterPowerLoss(_ loss: PowerLoss, seed: UInt64 = 1) -> SimulatedDisk {
        mutex.withLock {
            var random = seed &* 0x9E37_79B9_7F4A_7C15 | 1
            func coin() -> Bool {
                random ^= random << 13
                random ^= random >> 7
                random ^= random << 17
                return random & 1 == 1
            }
            var kept = durableNames
            var index = 0
            while index < pendingNames.count {
                let operation = pendingNames[index].operation
                let survives = switch loss {
                case .keepEverything, .tearLastWrite: true
                case .loseUnsynced: false
                case .reorderUnsynced: coin()
                }
                while index < pendingNames.count, pendingNames[index].operation == operation {
                    if survives { kept[pendingNames[index].path] = pendingNames[index].node }
                    index += 1
                }
            }
            // A name whose directory did not survive is unreachable (parents sort first).
            for path in kept.keys.sorted(by: { $0.count < $1.count }) where !roots.contains(path) {
                if case .directory? = kept[Path.directory(of: path)] {} else { kept[path] = nil }
            }
            let lastWrite = names.values.compactMap { node -> Int? in
                if case .file(let inode) = node { return inode.pending.last?.order }
                return nil
            }.max()
            var copies: [ObjectIdentifier: Inode] = [:]
            var survivors: [String: Node] = [:]
            for (path, node) in kept {
                guard case .file(let inode) = node else {
                    survivors[path] = .directory
                    continue
                }
                if let copy = copies[ObjectIdentifier(inode)] {
                    survivors[path] = .file(copy)
                    continue
                }
                var data = inode.durable
                for (order, change) in inode.pending {
                    switch loss {
                    case .loseUnsynced: continue
                    case .reorderUnsynced: if !coin() { continue }
                    case .keepEverything: break
                    case .tearLastWrite:
                        if order == lastWrite, case .write(let offset, let bytes) = change {
                            _ = coin()
                            let length = Int(random % UInt64(max(bytes.count, 1)))
                            Self.apply(.write(offset: offset, bytes: Array(bytes.prefix(length))), to: &data)
                            continue
                        }
                    }
                    Self.apply(change, to: &data)
                }
                let copy = Inode(data, time: inode.modificationTime)
                copies[ObjectIdentifier(inode)] = copy
                survivors[path] = .file(copy)
            }
            return SimulatedDisk(names: survivors, roots: roots)
        }
    }

    static func apply(_ change: Change, to data: inout [UInt8]) {
        switch change {
        case .write(let offset, let bytes):
            if data.count < offset + bytes.count { data.append(contentsOf: repeatElement(0, count: offset + bytes.count - data.count)) }
            data.replaceSubrange(offset..<offset + bytes.count, with: bytes)
        case .truncate(let size):
            if size < data.count { data.removeLast(data.count - size) } else {
                data.append(contentsOf: repeatElement(0, count: size - data.count))
            }
        }
    }

    // MARK: Bookkeeping (called with the mutex held)

    /// Counts a mutating call and decides whether it happens: throws when the power is (or
    /// now goes) off, or when the failure rule says so.
    private func begin(_ kind: Operation.Kind, _ path: String) throws {
        guard !dead else { throw IOError(operation: kind.rawValue, path: path, code: EIO) }
        operations += 1
        operationsByKind[kind, default: 0] += 1
        if let cutAt, operations >= cutAt {
            dead = true
            throw IOError(operation: kind.rawValue, path: path, code: EIO)
        }
        let operation = Operation(kind: kind, path: path, number: operations, numberOfKind: operationsByKind[kind]!)
        if let code = rule?(operation) {
            failed.append(operation)
            throw IOError(operation: kind.rawValue, path: path, code: code)
        }
    }

    private func checkAlive(_ operation: String, _ path: String) throws {
        if dead { throw IOError(operation: operation, path: path, code: EIO) }
    }

    private func changeNames(_ changes: [(String, Node?)], durableWith directory: String? = nil) {
        order += 1
        for (path, node) in changes {
            names[path] = node
            pendingNames.append(
                NameChange(operation: order, path: path, node: node, directory: directory ?? Path.directory(of: path)))
        }
    }

    private func file(_ path: String, _ operation: String) throws -> Inode {
        switch names[path] {
        case .file(let inode)?: return inode
        case .directory?: throw IOError(operation: operation, path: path, code: EISDIR)
        case nil: throw IOError(operation: operation, path: path, code: ENOENT)
        }
    }

    private func requireDirectory(_ path: String, _ operation: String) throws {
        guard case .directory? = names[path] else {
            throw IOError(operation: operation, path: path, code: names[path] == nil ? ENOENT : ENOTDIR)
        }
    }

    static func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
    }

    // MARK: FileSystem

    public func openFile(_ path: String, _ mode: OpenMode) throws -> any RandomAccessFile {
        try mutex.withLock {
            try checkAlive("open", path)
            let inode: Inode
            switch (mode, names[path]) {
            case (.readOnly, _), (.readWrite, _):
                inode = try file(path, "open")
            case (.createNew, _?):
                throw IOError(operation: "open", path: path, code: EEXIST)
            case (.createOrTruncate, _?):
                inode = try file(path, "open")
                try begin(.truncate, path)
                change(inode, .truncate(size: 0))
            case (.createNew, nil), (.createOrTruncate, nil):
                try requireDirectory(Path.directory(of: path), "open")
                try begin(.create, path)
                inode = Inode([], time: Self.now())
                inode.durable = []
                changeNames([(path, .file(inode))])
            }
            return SimulatedFile(path: path, inode: inode, disk: self, writable: mode != .readOnly)
        }
    }

    public func createDirectory(_ path: String) throws {
        try mutex.withLock {
            try checkAlive("mkdir", path)
            var missing: [String] = []
            var current = path
            while names[current] == nil {
                missing.append(current)
                let parent = Path.directory(of: current)
                if parent == current || parent == "." { break }
                current = parent
            }
            if case .file? = names[current] { throw IOError(operation: "mkdir", path: current, code: ENOTDIR) }
            for directory in missing.reversed() {
                try begin(.makeDirectory, directory)
                changeNames([(directory, .directory)])
            }
        }
    }

    public func listDirectory(_ path: String) throws -> [String] {
        try mutex.withLock {
            try checkAlive("opendir", path)
            try requireDirectory(path, "opendir")
            // A prefix test first: most names lie in other folders, and it stops at their first
            // differing byte.
            let prefix = path.hasSuffix("/") ? path : path + "/"
            return names.keys.compactMap { name in
                guard name.hasPrefix(prefix) else { return nil }
                let rest = name.utf8.dropFirst(prefix.utf8.count)
                return rest.isEmpty || rest.contains(UInt8(ascii: "/")) ? nil : String(decoding: rest, as: UTF8.self)
            }
        }
    }

    public func status(_ path: String) throws -> FileStatus? {
        try mutex.withLock {
            try checkAlive("stat", path)
            switch names[path] {
            case nil: return nil
            case .directory?: return FileStatus(kind: .directory, size: 0, modificationTime: .zero)
            case .file(let inode)?:
                return FileStatus(kind: .file, size: Int64(inode.data.count), modificationTime: inode.modificationTime)
            }
        }
    }

    public func rename(_ source: String, to destination: String) throws {
        try mutex.withLock {
            try checkAlive("rename", destination)
            guard let node = names[source] else { throw IOError(operation: "rename", path: source, code: ENOENT) }
            try requireDirectory(Path.directory(of: destination), "rename")
            var changes: [(String, Node?)] = [(destination, node), (source, nil)]
            if case .directory = node {
                // Everything under a directory moves with it, in the one atomic name change.
                // Names under it that are not yet durable would need their own bookkeeping
                // across the move; storage code syncs a directory before renaming it, and
                // the model insists.
                let prefix = source + "/"
                guard names[destination] == nil else { throw IOError(operation: "rename", path: destination, code: EEXIST) }
                guard !pendingNames.contains(where: { $0.path.hasPrefix(prefix) }) else {
                    throw IOError(operation: "rename (the simulated disk needs the directory synced first)", path: source, code: EINVAL)
                }
                for (path, child) in names where path.hasPrefix(prefix) {
                    changes.append((destination + "/" + path.dropFirst(prefix.count), child))
                    changes.append((path, nil))
                }
                for (path, lock) in locks where path.hasPrefix(prefix) {
                    locks[path] = nil
                    locks[destination + "/" + path.dropFirst(prefix.count)] = lock
                }
            }
            try begin(.rename, destination)
            changeNames(changes, durableWith: Path.directory(of: destination))
        }
    }

    public func removeDirectory(_ path: String) throws {
        try mutex.withLock {
            try checkAlive("rmdir", path)
            try requireDirectory(path, "rmdir")
            guard !names.keys.contains(where: { $0 != path && Path.directory(of: $0) == path }) else {
                throw IOError(operation: "rmdir", path: path, code: ENOTEMPTY)
            }
            try begin(.remove, path)
            changeNames([(path, nil)])
        }
    }

    public func removeFile(_ path: String) throws {
        try mutex.withLock {
            try checkAlive("unlink", path)
            _ = try file(path, "unlink")
            try begin(.remove, path)
            changeNames([(path, nil)])
        }
    }

    public func syncDirectory(_ path: String) throws {
        try mutex.withLock {
            try checkAlive("fsync", path)
            try requireDirectory(path, "fsync")
            try begin(.syncDirectory, path)
            for change in pendingNames where change.directory == path {
                durableNames[change.path] = change.node
            }
            pendingNames.removeAll { $0.directory == path }
        }
    }

    public func setModificationTime(_ path: String, to time: Duration?) throws {
        try mutex.withLock {
            try checkAlive("utimensat", path)
            try file(path, "utimensat").modificationTime = time ?? Self.now()
        }
    }

    public func lock(_ path: String, holder: String) throws -> any HeldLock {
        try mutex.withLock {
            try checkAlive("flock", path)
            if let current = locks[path] { throw LockHeldError(path: path, holder: current.holder) }
            if names[path] == nil {
                try requireDirectory(Path.directory(of: path), "open")
                names[path] = .file(Inode([], time: Self.now()))
            }
            lockCount += 1
            locks[path] = (holder, lockCount)
            return SimulatedLock(id: lockCount, disk: self)
        }
    }

    /// By number, because a lock follows its file when the file's directory is renamed.
    fileprivate func unlock(_ id: Int) {
        mutex.withLock {
            if let path = locks.first(where: { $0.value.id == id })?.key { locks[path] = nil }
        }
    }

    // MARK: Files

    fileprivate func read(_ inode: Inode, _ path: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64)
        throws -> Int
    {
        try mutex.withLock {
            try checkAlive("pread", path)
            let start = min(Int(offset), inode.data.count)
            let count = min(buffer.count, inode.data.count - start)
            inode.data.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: count) }
            return count
        }
    }

    fileprivate func write(_ inode: Inode, _ path: String, _ bytes: [UInt8], at offset: Int64) throws {
        try mutex.withLock {
            do {
                try begin(.write, path)
            } catch let error as IOError where error.code != EIO || !dead {
                // A write that fails part-way (a full disk) leaves what it wrote.
                if bytes.count > 1 { change(inode, .write(offset: Int(offset), bytes: Array(bytes.prefix(bytes.count / 2)))) }
                throw error
            }
            change(inode, .write(offset: Int(offset), bytes: bytes))
        }
    }

    fileprivate func truncate(_ inode: Inode, _ path: String, to size: Int64) throws {
        try mutex.withLock {
            try begin(.truncate, path)
            change(inode, .truncate(size: Int(size)))
        }
    }

    private func change(_ inode: Inode, _ change: Change) {
        order += 1
        inode.pending.append((order, change))
        Self.apply(change, to: &inode.data)
        inode.modificationTime = Self.now()
    }

    fileprivate func sync(_ inode: Inode, _ path: String) throws {
        try mutex.withLock {
            try begin(.sync, path)
            inode.durable = inode.data
            inode.pending = []
        }
    }

    fileprivate func size(_ inode: Inode, _ path: String) throws -> Int64 {
        try mutex.withLock {
            try checkAlive("fstat", path)
            return Int64(inode.data.count)
        }
    }
}

/// Holds its disk strongly (the disk holds no lock objects, so there is no cycle): Swift keeps
/// a weak reference's side table behind a tagged pointer that LeakSanitizer cannot follow, and
/// the fuzz targets, which run on this disk, would report it as a leak.
final class SimulatedLock: HeldLock, @unchecked Sendable {
    let id: Int
    let disk: SimulatedDisk
    private let released = NSLock()
    private var done = false
    init(id: Int, disk: SimulatedDisk) {
        self.id = id
        self.disk = disk
    }
    deinit { release() }
    func release() {
        let first = released.withLock {
            defer { done = true }
            return !done
        }
        if first { disk.unlock(id) }
    }
}

/// An open file of a ``SimulatedDisk``: like a descriptor, it keeps reaching the same bytes
/// after its name is renamed or removed.
final class SimulatedFile: RandomAccessFile {
    let path: String
    private let inode: SimulatedDisk.Inode
    private let disk: SimulatedDisk
    private let writable: Bool
    private var closed = false

    init(path: String, inode: SimulatedDisk.Inode, disk: SimulatedDisk, writable: Bool) {
        self.path = path
        self.inode = inode
        self.disk = disk
        self.writable = writable
    }

    private func check(_ operation: String, writing: Bool = false) throws {
        if closed { throw IOError(operation: operation, path: path, code: EBADF) }
        if writing && !writable { throw IOError(operation: operation, path: path, code: EBADF) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try check("pread")
        return try disk.read(inode, path, into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try check("pwrite", writing: true)
        try disk.write(inode, path, Array(bytes), at: offset)
    }
    func size() throws -> Int64 {
        try check("fstat")
        return try disk.size(inode, path)
    }
    func truncate(to size: Int64) throws {
        try check("ftruncate", writing: true)
        try disk.truncate(inode, path, to: size)
    }
    func sync() throws {
        try check("fdatasync")
        try disk.sync(inode, path)
    }
    func close() throws { closed = true }
}
