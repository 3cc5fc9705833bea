/// One sparse-index entry: where a batch starts (FORMAT.md, "Sparse index file (.idx)").
struct IndexEntry: Equatable {
    var sequence: UInt64
    var timestamp: LogTimestamp
    var offset: Int64
}

/// Encoding and decoding of `.idx` files. The index is derived data: decoding never throws; it
/// returns the entries it can trust and says whether the rest was damaged.
enum IndexFile {
    static func header(firstSequence: UInt64) -> [UInt8] {
        var bytes = LegacyFormat.indexMagic
        bytes.appendLittleEndian(LegacyFormat.indexVersion)
        bytes.appendLittleEndian(UInt16(0))
        bytes.appendLittleEndian(firstSequence)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    static func append(_ entry: IndexEntry, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.appendLittleEndian(entry.sequence)
        bytes.appendLittleEndian(entry.timestamp.microsecondsSinceEpoch)
        bytes.appendLittleEndian(UInt64(entry.offset))
        bytes.appendLittleEndian(CRC32C.checksum(bytes[start...]))
    }

    /// What a decoded index holds.
    struct Contents: Equatable {
        /// The trustworthy entries, in order.
        var entries: [IndexEntry]
        /// Bytes of the file those entries (and the header) cover.
        var validLength: Int
        /// True when the file had bytes after the valid ones, or a bad or missing header.
        var damaged: Bool
    }

    static func decode(_ bytes: [UInt8], firstSequence: UInt64) -> Contents {
        let headerSize = LegacyFormat.indexHeaderSize
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == LegacyFormat.indexMagic,
            bytes.getLittleEndian(UInt32.self, at: 20) == CRC32C.checksum(bytes[0..<20]),
            bytes.getLittleEndian(UInt16.self, at: 8) == LegacyFormat.indexVersion,
            bytes.getLittleEndian(UInt64.self, at: 12) == firstSequence
        else { return Contents(entries: [], validLength: 0, damaged: true) }
        var entries: [IndexEntry] = []
        var position = headerSize
        while position + LegacyFormat.indexEntrySize <= bytes.count {
            let crc = bytes.getLittleEndian(UInt32.self, at: position + 24)
            guard crc == CRC32C.checksum(bytes[position..<position + 24]) else { break }
            let entry = IndexEntry(
                sequence: bytes.getLittleEndian(UInt64.self, at: position),
                timestamp: LogTimestamp(microsecondsSinceEpoch: bytes.getLittleEndian(Int64.self, at: position + 8)),
                offset: Int64(bitPattern: bytes.getLittleEndian(UInt64.self, at: position + 16))
            )
            if let last = entries.last {
                guard entry.sequence > last.sequence, entry.offset > last.offset, entry.timestamp >= last.timestamp
                else { break }
            } else {
                guard entry.sequence == firstSequence, entry.offset == Int64(LegacyFormat.segmentHeaderSize) else { break }
            }
            entries.append(entry)
            position += LegacyFormat.indexEntrySize
        }
        return Contents(entries: entries, validLength: position, damaged: position != bytes.count)
    }

    /// The last entry at or before a sequence number (binary search), or nil.
    static func entry(atOrBefore sequence: UInt64, in entries: [IndexEntry]) -> IndexEntry? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : entries[low - 1]
    }

    /// The last entry whose timestamp is strictly before `time`: every event at or after `time`
    /// starts at or after it (timestamps never decrease). Nil means "from the segment's start".
    static func entry(before time: LogTimestamp, in entries: [IndexEntry]) -> IndexEntry? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].timestamp < time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : entries[low - 1]
    }
}
