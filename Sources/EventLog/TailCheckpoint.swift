import Dispatch
import FileIO
import Synchronization

/// What a writer knew at a point of the active segment it had synced (while running, and at a
/// clean close): the end of data there and the chain's head (FORMAT.md, "Tail checkpoint").
/// Derived data: an opening writer starts from it, rehashing only the records after it, when
/// the records up to it pass their framing and CRCs and one ends exactly there, and checks it
/// in the background (``TailCheck``).
struct TailCheckpoint: Equatable {
    var firstSequence: UInt64
    var logID: [UInt8]
    var dataEnd: Int64
    var nextSequence: UInt64
    var lastTime: Int64
    var chain: ChainHash

    static let magic: [UInt8] = Array("VTLOGHED".utf8)
    static let version: UInt16 = 1
    static let size = 100
    static let crcOffset = 96
    static let fileExtension = ".head"

    static func path(_ directory: String, _ firstSequence: UInt64) -> String {
        Path.join(directory, SegmentFiles.name(firstSequence, fileExtension))
    }

    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.appendLittleEndian(Self.version)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(firstSequence)
        bytes.append(contentsOf: logID)
        bytes.appendLittleEndian(UInt64(dataEnd))
        bytes.appendLittleEndian(nextSequence)
        bytes.appendLittleEndian(lastTime)
        bytes.append(contentsOf: chain.bytes)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == Self.size)
        return bytes
    }

    /// The checkpoint in `bytes`, when they are one for the segment with `header` (nil otherwise).
    static func decode(_ bytes: [UInt8], for header: TailSegmentHeader) -> TailCheckpoint? {
        guard bytes.count == size, Array(bytes[0..<8]) == magic,
            bytes.getLittleEndian(UInt32.self, at: crcOffset) == CRC32C.checksum(bytes[0..<crcOffset]),
            bytes.getLittleEndian(UInt16.self, at: 8) == version, bytes[10..<16].allSatisfy({ $0 == 0 }),
            bytes.getLittleEndian(UInt64.self, at: 16) == header.firstSequence, Array(bytes[24..<40]) == header.logID
        else { return nil }
        let dataEnd = bytes.getLittleEndian(UInt64.self, at: 40)
        let next = bytes.getLittleEndian(UInt64.self, at: 48)
        let lastTime = bytes.getLittleEndian(Int64.self, at: 56)
        guard dataEnd >= UInt64(Format2.segmentHeaderSize), dataEnd <= UInt64(Int64.max), next >= header.firstSequence,
            lastTime >= header.timeBefore
        else { return nil }
        return TailCheckpoint(
            firstSequence: header.firstSequence, logID: header.logID, dataEnd: Int64(dataEnd), nextSequence: next,
            lastTime: lastTime, chain: ChainHash(bytes: Array(bytes[64..<96])))
    }

    /// The checkpoint beside the segment with `header`, if there is a well-formed one for it.
    static func read(for header: TailSegmentHeader, in directory: String, fileSystem: any FileSystem) -> TailCheckpoint? {
        guard let file = try? fileSystem.openFile(path(directory, header.firstSequence), .readOnly) else { return nil }
        defer { try? file.close() }
        guard let bytes = try? file.read(count: size + 1, at: 0) else { return nil }
        return decode(bytes, for: header)
    }

    /// Writes it beside its segment (derived data, unsynced).
    func write(in directory: String, fileSystem: any FileSystem) throws {
        try fileSystem.writeDerived(encoded(), to: Self.path(directory, firstSequence))
    }
}

/// The check of a tail checkpoint an opening writer started from: the segment's events up to
/// its end of data decompressed, parsed and rehashed on another thread, as an open without a
/// checkpoint does, and compared with what the checkpoint says. Started when the log's owner
/// has finished reading at open (``EventLog/startTailCheck()``), so that it does not compete
/// with that, or at the latest by the first append or the close, which wait for it.
final class TailCheck: @unchecked Sendable {
    private let group = DispatchGroup()
    private let started = Mutex(false)
    private let path: String
    private let checkpoint: TailCheckpoint
    private let fileSystem: any FileSystem
    /// Written once on the checking thread before `group` is left; read after waiting on it.
    private var problem: String?

    init(segment path: String, checkpoint: TailCheckpoint, fileSystem: any FileSystem) {
        self.path = path
        self.checkpoint = checkpoint
        self.fileSystem = fileSystem
    }

    /// Starts the check on another thread, unless it was started already; from `position` (a
    /// scan of the segment's start made by the opener: ``TailPosition``) when it lies at or
    /// before the checkpoint's end of data.
    func start(from position: TailPosition? = nil) {
        let first = started.withLock { wasStarted in
            defer { wasStarted = true }
            return !wasStarted
        }
        guard first else { return }
        DispatchQueue.global(qos: .utility).async(group: group) { [self] in
            problem = Self.problem(segment: path, checkpoint: checkpoint, fileSystem: fileSystem, from: position)
        }
    }

    /// Runs the check on the calling thread, now (it must not have been started): whether the
    /// segment's events give the checkpoint's values.
    func holdsWhenCheckedHere() -> Bool {
        started.withLock { $0 = true }
        problem = Self.problem(segment: path, checkpoint: checkpoint, fileSystem: fileSystem)
        return problem == nil
    }

    /// Waits for the check, starting it if needed: nil when the segment's events give the
    /// checkpoint's values, else what differs.
    func wait() -> String? {
        start()
        group.wait()
        return problem
    }

    static func problem(segment path: String, checkpoint: TailCheckpoint, fileSystem: any FileSystem, from position: TailPosition? = nil) -> String? {
        do {
            let scanner = try TailScanner.open(path: path, fileSystem: fileSystem, decompressor: ZstdDecompressor())
            defer { scanner.close() }
            var chain = EventChain(head: scanner.header.chainBefore, after: scanner.header.firstSequence - 1)
            if let position, position.offset <= checkpoint.dataEnd, scanner.resume(at: position) {
                chain = EventChain(head: position.chain, after: position.sequence)
            }
            if let damage = try scanner.rehash(into: &chain, upTo: checkpoint.dataEnd) {
                return "\(path) holds \(damage.reason) at offset \(damage.offset), before the checkpoint's end of data \(checkpoint.dataEnd)"
            }
            let found = (scanner.position, scanner.nextSequence, scanner.time, chain.head)
            guard found == (checkpoint.dataEnd, checkpoint.nextSequence, checkpoint.lastTime, checkpoint.chain) else {
                return "the events of \(path) end at offset \(found.0), sequence \(found.1 - 1), time \(found.2), head \(found.3);"
                    + " its tail checkpoint says offset \(checkpoint.dataEnd), sequence \(checkpoint.nextSequence - 1),"
                    + " time \(checkpoint.lastTime), head \(checkpoint.chain)"
            }
            return nil
        } catch {
            return "\(path) could not be read to check its tail checkpoint: \(error)"
        }
    }
}
