/// docs/FORMAT.md's part "Format 2", read from its tables alone: segment headers, hot-tail
/// records, block files, blocks in both layouts and all three codecs (codec 2's field form in
/// IndependentFieldColumns.swift), erased events and the event chain. Every rule the document
/// states is checked; a broken one throws ``FormatRuleBroken``. Used by the independent reader
/// and by the worked example's dump, which both need the fields' places.
enum IndependentFormat2: FormatBytes {
    static let segmentHeaderSize = 136
    static let blockFileHeaderSize = 120
    static let blockHeaderSize = 116
    static let maxRaw = 64 << 20

    struct SegmentHeader {
        var firstSequence: UInt64
        var logID: [UInt8]
        var createdAt: Int64
        var timeBefore: Int64
        var chainBefore: [UInt8]
        var originSequence: UInt64
        var originHash: [UInt8]
    }

    /// One event where it lies in a raw payload (ranges index that payload).
    struct Event {
        var sequence: UInt64
        var delta: UInt64
        var time: Int64
        var payload: [UInt8]
        /// Erased: `payload` is the 32-byte digest of the payload it had, then up to 16 kept bytes.
        var erased = false
        var deltaAt: Range<Int>
        var lengthAt: Range<Int>
        var payloadAt: Range<Int>
    }

    struct Record {
        var offset: Int
        var headLength: Int
        var storedLength: Int
        var codec: UInt8
        /// The body once decompressed: the raw events.
        var raw: [UInt8]
        var events: [Event]
        var bodyStart: Int { offset + headLength }
        var crcOffset: Int { bodyStart + storedLength }
        var end: Int { crcOffset + 4 }
    }

    struct BlockFileHeader {
        var firstSequence: UInt64
        var eventCount: UInt64
        var logID: [UInt8]
        var originSequence: UInt64
        var originHash: [UInt8]
        var createdAt: Int64
        var blockCount: UInt32
    }

    /// A block: its header's fields (in the table's order), then what its payload holds.
    struct Block {
        var offset: Int
        var codec, layout, flags: UInt8
        var firstSequence: UInt64
        var eventCount, storedLength, rawLength: Int
        var timeBefore, lastTime: Int64
        var chainBefore, chainAfter: [UInt8]
        /// The payload once decompressed.
        var raw: [UInt8]
        /// Where the events start in `raw`: after the erasure list, if any.
        var eventsStart: Int
        /// Codec 2: which parts of its section the field form used (IndependentFieldColumns).
        var fieldsSeen: Set<String> = []
        var events: [Event]
        var payloadStart: Int { offset + blockHeaderSize }
        var end: Int { payloadStart + storedLength }
    }

    // MARK: Segments and records

    /// What a segment header and a block file header share: an 8-byte magic, version 2 in a
    /// `u16`, zero reserved bytes at 10..<16 and at `reserved`, and a CRC of all before it last.
    static func checkFileHeader(_ b: [UInt8], magic: String, size: Int, reserved: Range<Int>) throws {
        try check(b.count >= size, "a \(magic) file of at least its \(size)-byte header")
        try check(Array(b[0..<8]) == Array(magic.utf8), "magic \(magic)")
        try check(u16(b, 8) == 2, "\(magic) version 2")
        try check(b[10..<16].allSatisfy { $0 == 0 } && b[reserved].allSatisfy { $0 == 0 }, "zero reserved bytes")
        try check(crc32c(b[0..<size - 4]) == u32(b, size - 4), "the \(magic) header_crc")
    }

    static func segmentHeader(_ b: [UInt8]) throws -> SegmentHeader {
        try checkFileHeader(b, magic: "VTLOGSEG", size: segmentHeaderSize, reserved: 128..<132)
        let header = SegmentHeader(
            firstSequence: u64(b, 16), logID: Array(b[24..<40]), createdAt: i64(b, 40), timeBefore: i64(b, 48),
            chainBefore: Array(b[56..<88]), originSequence: u64(b, 88), originHash: Array(b[96..<128]))
        try check(header.originSequence != 0 || header.originHash.allSatisfy { $0 == 0 }, "a zero origin_hash without an origin")
        return header
    }

    /// The record at `offset`, or nil at the end of data (the file's end or a zero byte, with
    /// nothing but zeros after it).
    static func record(_ b: [UInt8], at offset: Int, firstSequence: UInt64, timeBefore: Int64) throws -> Record? {
        if offset == b.count || b[offset] == 0 {
            try check(b[offset...].allSatisfy { $0 == 0 }, "only zeros after the end of data at \(offset)")
            return nil
        }
        var position = offset
        let head = try varint(b, &position)
        let headLength = position - offset
        try check(headLength <= 4, "a record head of at most 4 bytes at \(offset)")
        let stored = head >> 1
        let codec = UInt8(head & 1)
        try check(stored >= 2 && stored <= UInt64(maxRaw), "a stored_length from 2 to 64 MiB at \(offset)")
        let bodyEnd = position + Int(stored)
        try check(bodyEnd + 4 <= b.count, "a record that fits in the file at \(offset)")
        try check(crc32c(b[offset..<bodyEnd]) == u32(b, bodyEnd), "record_crc at \(offset)")
        let body = Array(b[position..<bodyEnd])
        let raw = codec == 1 ? try unzstd(body, rawLength: nil, singleFrame: true) : body
        let events = try rows(raw, count: nil, from: 0, firstSequence: firstSequence, timeBefore: timeBefore, erased: [])
        return Record(offset: offset, headLength: headLength, storedLength: Int(stored), codec: codec, raw: raw, events: events)
    }

    // MARK: Raw events

    /// `time + delta`, the delta an unsigned difference that must not pass 2^63 − 1.
    static func advance(_ time: Int64, by delta: UInt64) throws -> Int64 {
        try check(delta <= UInt64(bitPattern: Int64.max &- time), "a time that does not pass 2^63 − 1")
        return time &+ Int64(bitPattern: delta)
    }

    static func payload(_ raw: [UInt8], _ range: Range<Int>, erased: Bool) throws -> [UInt8] {
        try check(!erased || (32...48).contains(range.count), "an erased event's 32-byte digest and at most 16 kept bytes")
        return Array(raw[range])
    }

    /// `time_delta, length, payload` per event, `count` of them or (nil) to the end.
    static func rows(
        _ raw: [UInt8], count: Int?, from start: Int, firstSequence: UInt64, timeBefore: Int64, erased: Set<Int>
    ) throws -> [Event] {
        var position = start
        var time = timeBefore
        var events: [Event] = []
        while count.map({ events.count < $0 }) ?? (position < raw.count) {
            let deltaStart = position
            let delta = try varint(raw, &position)
            let lengthStart = position
            let length = try varint(raw, &position)
            try check(length <= UInt64(raw.count - position), "a length within the raw events")
            time = try advance(time, by: delta)
            let payloadAt = position..<position + Int(length)
            let isErased = erased.contains(events.count)
            events.append(Event(
                sequence: firstSequence + UInt64(events.count), delta: delta, time: time,
                payload: try payload(raw, payloadAt, erased: isErased), erased: isErased, deltaAt: deltaStart..<lengthStart,
                lengthAt: lengthStart..<position, payloadAt: payloadAt))
            position = payloadAt.upperBound
        }
        try check(!events.isEmpty, "at least one event")
        try check(position == raw.count, "events that end exactly at the raw length")
        return events
    }

    /// All time deltas, then all lengths, then the payloads.
    static func columns(
        _ raw: [UInt8], count: Int, from start: Int, firstSequence: UInt64, timeBefore: Int64, erased: Set<Int>
    ) throws -> [Event] {
        var position = start
        var time = timeBefore
        var deltas: [(UInt64, Int64, Range<Int>)] = []
        for _ in 0..<count {
            let deltaStart = position
            let delta = try varint(raw, &position)
            time = try advance(time, by: delta)
            deltas.append((delta, time, deltaStart..<position))
        }
        var lengths: [(UInt64, Range<Int>)] = []
        for _ in 0..<count {
            let lengthStart = position
            lengths.append((try varint(raw, &position), lengthStart..<position))
        }
        var events: [Event] = []
        for index in 0..<count {
            try check(lengths[index].0 <= UInt64(raw.count - position), "a length within the raw events")
            let payloadAt = position..<position + Int(lengths[index].0)
            events.append(Event(
                sequence: firstSequence + UInt64(index), delta: deltas[index].0, time: deltas[index].1,
                payload: try payload(raw, payloadAt, erased: erased.contains(index)), erased: erased.contains(index),
                deltaAt: deltas[index].2, lengthAt: lengths[index].1, payloadAt: payloadAt))
            position = payloadAt.upperBound
        }
        try check(position == raw.count, "payloads that end exactly at the raw length")
        return events
    }

    // MARK: Block files and blocks

    static func blockFileHeader(_ b: [UInt8]) throws -> BlockFileHeader {
        try checkFileHeader(b, magic: "VTLOGBLK", size: blockFileHeaderSize, reserved: 100..<116)
        let header = BlockFileHeader(
            firstSequence: u64(b, 16), eventCount: u64(b, 24), logID: Array(b[32..<48]), originSequence: u64(b, 48),
            originHash: Array(b[56..<88]), createdAt: i64(b, 88), blockCount: u32(b, 96))
        try check(header.eventCount >= 1 && header.blockCount >= 1, "a block file of at least one event and one block")
        return header
    }

    static func block(_ b: [UInt8], at offset: Int) throws -> Block {
        try check(offset + blockHeaderSize <= b.count, "a whole block header at \(offset)")
        let h = Array(b[offset..<offset + blockHeaderSize])
        try check(Array(h[0..<4]) == Array("VTBK".utf8), "magic VTBK at \(offset)")
        try check(crc32c(h[0..<112]) == u32(h, 112), "the block's header_crc at \(offset)")
        try check(h[4] == 2, "block version 2")
        try check(h[5] <= 2 && h[6] <= 1 && h[7] & ~1 == 0, "a known codec and layout, and no unknown flags")
        try check(h[5] != 2 || h[6] == 1, "codec 2 with layout 1 (columns) only")
        var block = Block(
            offset: offset, codec: h[5], layout: h[6], flags: h[7], firstSequence: u64(h, 8), eventCount: Int(u32(h, 16)),
            storedLength: Int(u32(h, 20)), rawLength: Int(u32(h, 24)), timeBefore: i64(h, 28), lastTime: i64(h, 36),
            chainBefore: Array(h[44..<76]), chainAfter: Array(h[76..<108]), raw: [], eventsStart: 0, events: [])
        try check(block.firstSequence >= 1 && block.eventCount >= 1, "a block of at least one event from sequence 1 on")
        try check(block.rawLength <= maxRaw, "a raw length of at most 64 MiB")
        try check(block.codec != 0 || block.storedLength == block.rawLength, "equal stored and raw lengths when stored raw")
        try check(block.lastTime >= block.timeBefore, "a last time not before time_before")
        try check(block.end <= b.count, "a whole block payload at \(offset)")
        let stored = Array(b[block.payloadStart..<block.end])
        try check(crc32c(stored) == u32(h, 108), "the block's payload_crc at \(offset)")
        // Codec 2's frame holds the field form F, whose size is its own, not raw_length; F is
        // rebuilt into the raw payload, and from there on a block reads the same whatever its codec.
        var headLength: Int?
        switch block.codec {
        case 0: block.raw = stored
        case 1: block.raw = try unzstd(stored, rawLength: block.rawLength, singleFrame: true)
        default:
            let form = try unzstd(stored, rawLength: nil, singleFrame: true)
            (block.raw, headLength, block.fieldsSeen) = try IndependentFieldColumns.rebuildWithHead(
                form, eventCount: block.eventCount, rawLength: block.rawLength)
        }

        var position = 0
        var erased: Set<Int> = []
        if block.flags & 1 != 0 {
            let total = try varint(block.raw, &position)
            try check(total >= 1 && total <= UInt64(block.eventCount), "an erased_count from 1 to the block's events")
            var index = 0
            for number in 0..<Int(total) {
                let gap = try varint(block.raw, &position)
                try check(number == 0 || gap >= 1, "a gap of at least 1 between erased events")
                try check(gap < UInt64(block.eventCount - index), "an erased event inside the block")
                index += Int(gap)
                erased.insert(index)
            }
        }
        block.eventsStart = position
        block.events = block.layout == 0
            ? try rows(block.raw, count: block.eventCount, from: position, firstSequence: block.firstSequence,
                       timeBefore: block.timeBefore, erased: erased)
            : try columns(block.raw, count: block.eventCount, from: position, firstSequence: block.firstSequence,
                          timeBefore: block.timeBefore, erased: erased)
        try check(block.events.last!.time == block.lastTime, "a last event at last_time")
        // Codec 2's head is "the raw payload up to its lengths column", no more and no less.
        try check(headLength.map { $0 == block.events[0].lengthAt.lowerBound } ?? true, "a head that ends where the lengths start")
        return block
    }

    // MARK: The event chain

    static func anchor(logID: [UInt8], originSequence: UInt64, originHash: [UInt8]) -> [UInt8] {
        sha256([0x02] + Array("VTLOG2".utf8) + logID + le(originSequence) + originHash)
    }

    static func leaf(sequence: UInt64, time: Int64, digest: [UInt8]) -> [UInt8] {
        sha256([0x00] + le(sequence) + le(time) + digest)
    }

    static func step(_ head: [UInt8], _ leaf: [UInt8]) -> [UInt8] { sha256([0x01] + head + leaf) }

    /// An event's digest: its payload hashed, or kept as it is when erased.
    static func digest(_ event: Event) -> [UInt8] { event.erased ? Array(event.payload.prefix(32)) : sha256(event.payload) }
}
