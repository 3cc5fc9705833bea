import FileIO

/// What a key summary is about: a name and, for each event's payload, at most one key
/// (FORMAT.md, "Key summaries"). The log never interprets a key; the layer above chooses what
/// one is (the app's: the pin an event is about) and asks which blocks may hold one
/// (``LogReader/ranges(mayHoldKeysIn:function:from:through:)``).
public struct BlockKeys: Sendable {
    /// 1 to 16 printable ASCII bytes, written into every summary; a summary written for another
    /// name is never used.
    public let name: String
    /// The key an event's payload carries, or nil for none. Must be a function of the payload
    /// alone, and cheap: compaction calls it on every event.
    public let key: @Sendable (ArraySlice<UInt8>) -> UInt64?

    public init(name: String, key: @escaping @Sendable (ArraySlice<UInt8>) -> UInt64?) {
        self.name = name
        self.key = key
    }

    var isValidName: Bool { (1...16).contains(name.utf8.count) && name.utf8.allSatisfy { (0x21...0x7E).contains($0) } }
}

/// One block file's key summary: for each block, its first sequence and the distinct keys its
/// events carry, ascending. Derived data (never synced, checked before use, rebuilt when
/// missing), laid out in FORMAT.md, "Key summaries".
struct KeySummary: Equatable {
    struct Block: Equatable {
        var firstSequence: UInt64
        var keys: [UInt64]
    }

    var function: String
    var blocks: [Block]

    static let magic: [UInt8] = Array("VTLOGKEY".utf8)
    static let version: UInt16 = 1
    static let headerSize = 80
    static let headerCRCOffset = 76
    static let fileExtension = ".keys"

    static func path(_ directory: String, _ firstSequence: UInt64) -> String {
        Path.join(directory, SegmentFiles.name(firstSequence, fileExtension))
    }

    /// The bytes of this summary for the block file with `header`.
    func encoded(for header: BlockFileHeader) -> [UInt8] {
        var bytes = Self.magic
        bytes.appendLittleEndian(Self.version)
        bytes.append(contentsOf: repeatElement(0, count: 6))
        bytes.appendLittleEndian(header.firstSequence)
        bytes.appendLittleEndian(header.eventCount)
        bytes.append(contentsOf: header.logID)
        bytes.appendLittleEndian(header.createdAt.microsecondsSinceEpoch)
        bytes.appendLittleEndian(header.blockCount)
        bytes.append(contentsOf: Self.nameField(function))
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        assert(bytes.count == Self.headerSize)
        for block in blocks {
            bytes.appendLittleEndian(block.firstSequence)
            bytes.appendLittleEndian(UInt32(block.keys.count))
            for key in block.keys { bytes.appendLittleEndian(key) }
        }
        bytes.appendLittleEndian(CRC32C.checksum(bytes[Self.headerSize...]))
        return bytes
    }

    private static func nameField(_ name: String) -> [UInt8] {
        Array(name.utf8.prefix(16)) + repeatElement(0, count: 16 - min(16, name.utf8.count))
    }

    /// The summary in `bytes` when it is one for the block file with `header`, made by
    /// `function`, and keeps every rule; nil otherwise (a reader then reads the whole file).
    static func decode(_ bytes: [UInt8], for header: BlockFileHeader, function: String) -> KeySummary? {
        guard bytes.count >= headerSize + 4, Array(bytes[0..<8]) == magic,
            bytes.getLittleEndian(UInt32.self, at: headerCRCOffset) == CRC32C.checksum(bytes[0..<headerCRCOffset]),
            bytes.getLittleEndian(UInt16.self, at: 8) == version, bytes[10..<16].allSatisfy({ $0 == 0 }),
            bytes.getLittleEndian(UInt64.self, at: 16) == header.firstSequence,
            bytes.getLittleEndian(UInt64.self, at: 24) == header.eventCount,
            Array(bytes[32..<48]) == header.logID,
            bytes.getLittleEndian(Int64.self, at: 48) == header.createdAt.microsecondsSinceEpoch,
            bytes.getLittleEndian(UInt32.self, at: 56) == header.blockCount,
            Array(bytes[60..<76]) == nameField(function)
        else { return nil }
        let end = bytes.count - 4
        guard bytes.getLittleEndian(UInt32.self, at: end) == CRC32C.checksum(bytes[headerSize..<end]) else { return nil }
        var blocks: [Block] = []
        blocks.reserveCapacity(Int(header.blockCount))
        var offset = headerSize
        for index in 0..<Int(header.blockCount) {
            guard end - offset >= 12 else { return nil }
            let first = bytes.getLittleEndian(UInt64.self, at: offset)
            let count = Int(bytes.getLittleEndian(UInt32.self, at: offset + 8))
            offset += 12
            let startsRight = index == 0 ? first == header.firstSequence : first > blocks[index - 1].firstSequence
            guard startsRight, first <= header.lastSequence, count <= (end - offset) / 8 else { return nil }
            var keys: [UInt64] = []
            keys.reserveCapacity(count)
            for _ in 0..<count {
                let key = bytes.getLittleEndian(UInt64.self, at: offset)
                guard keys.last.map({ $0 < key }) ?? true else { return nil }
                keys.append(key)
                offset += 8
            }
            blocks.append(Block(firstSequence: first, keys: keys))
        }
        guard offset == end else { return nil }
        return KeySummary(function: function, blocks: blocks)
    }

    /// The sequence ranges of the blocks that hold a key in `keys` (the file ending at
    /// `lastSequence`), adjacent blocks joined.
    func ranges(holding keys: ClosedRange<UInt64>, lastSequence: UInt64) -> [ClosedRange<UInt64>] {
        var ranges: [ClosedRange<UInt64>] = []
        for (index, block) in blocks.enumerated() where Self.holds(block.keys, anyOf: keys) {
            let last = index + 1 < blocks.count ? blocks[index + 1].firstSequence - 1 : lastSequence
            ranges.appendJoining(block.firstSequence...last)
        }
        return ranges
    }

    /// Whether the ascending `sorted` holds a value in `keys`: the first value not below the
    /// range's start, by binary search, is inside it.
    private static func holds(_ sorted: [UInt64], anyOf keys: ClosedRange<UInt64>) -> Bool {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < keys.lowerBound { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] <= keys.upperBound
    }

    /// The summary beside the block file `path` names (with its `header`), if there is a
    /// usable one for `function`.
    static func read(beside header: BlockFileHeader, in directory: String, function: String, fileSystem: any FileSystem) -> KeySummary? {
        let path = Self.path(directory, header.firstSequence)
        guard let file = try? fileSystem.openFile(path, .readOnly) else { return nil }
        defer { try? file.close() }
        guard let bytes = try? file.readAll() else { return nil }
        return decode(bytes, for: header, function: function)
    }

    /// Writes this summary beside the block file with `header` (derived data: a summary lost to
    /// a power cut is built again).
    func write(beside header: BlockFileHeader, in directory: String, fileSystem: any FileSystem) throws {
        try fileSystem.writeDerived(encoded(for: header), to: Self.path(directory, header.firstSequence))
    }
}

extension FileSystem {
    /// Writes a derived file (a key summary, a tail checkpoint) under a temporary name and
    /// renames it into place, without syncing: a reader checks it before use, and one that a
    /// power cut lost or cut short costs only time.
    func writeDerived(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + LogFiles.temporaryExtension
        do {
            let file = try io("create \(temporary)") { try openFile(temporary, .createOrTruncate) }
            defer { try? file.close() }
            try io("write \(temporary)") { try file.write(bytes, at: 0) }
            try io("rename \(temporary) to \(path)") { try rename(temporary, to: path) }
        } catch {
            try? removeFile(temporary)
            throw error
        }
    }
}

/// Collects the keys of a block's events as a block file is written, one entry a block.
struct KeySummaryCollector {
    let keys: BlockKeys
    private var current: [UInt64] = []
    private(set) var blocks: [KeySummary.Block] = []

    init(_ keys: BlockKeys) { self.keys = keys }

    mutating func add(_ payload: ArraySlice<UInt8>) {
        if let key = keys.key(payload) { current.append(key) }
    }

    /// Ends the block that starts at `firstSequence`.
    mutating func endBlock(startingAt firstSequence: UInt64) {
        current.sort()
        var distinct: [UInt64] = []
        distinct.reserveCapacity(current.count)
        for key in current where distinct.last != key { distinct.append(key) }
        blocks.append(KeySummary.Block(firstSequence: firstSequence, keys: distinct))
        current.removeAll(keepingCapacity: true)
    }

    /// Adds the keys of `block`'s events (an erased event carries none) and ends the block.
    mutating func append(_ block: SealedBlock) {
        var events = block.run.makeIterator(firstSequence: block.header.firstSequence)
        while let event = events.next() {
            if !event.isErased { add(event.payload) }
        }
        endBlock(startingAt: block.header.firstSequence)
    }

    var summary: KeySummary { KeySummary(function: keys.name, blocks: blocks) }
}

extension Array where Element == ClosedRange<UInt64> {
    /// Appends `range` (which must not start before the last one ends), joined to the last
    /// one when they touch.
    mutating func appendJoining(_ range: ClosedRange<UInt64>) {
        if let last = self.last, last.upperBound &+ 1 >= range.lowerBound {
            self[count - 1] = last.lowerBound...Swift.max(last.upperBound, range.upperBound)
        } else {
            append(range)
        }
    }
}
