import Foundation

/// A whole log read the way an outside implementer would, from docs/FORMAT.md alone: it lists
/// the directory, tells the format, checks every rule the document states, and recomputes the
/// head hash. It shares no code with the EventLog module (only swift-crypto and libzstd).
struct IndependentLog {
    struct Event: Equatable {
        var sequence: UInt64
        var time: Int64
        var payload: [UInt8]
    }

    var format = 0
    var events: [Event] = []
    /// Format 2: head(N); format 1: the SHA-256 of the last batch.
    var head: [UInt8] = []
    /// What was read, so that a test can tell its store covered each kind.
    var segments = 0
    var blockFiles = 0
    var recordCodecs: Set<UInt8> = []
    /// (codec, layout) of each block seen.
    var blockKinds: Set<[UInt8]> = []
    /// Codec 2: the parts of its section the store's field forms used ("kind 4", "marker 2", …).
    var fieldsSeen: Set<String> = []
    var batchCodecs: Set<UInt8> = []
    /// Segments left out because a block file covers them (a compaction's leftovers).
    var hiddenSegments = 0
}

enum IndependentReader: FormatBytes {
    static func read(_ directory: String) throws -> IndependentLog {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        // "Every data file is named by the sequence number of its first event: 20 decimal digits".
        func numbered(_ suffix: String) -> [(first: UInt64, path: String)] {
            names.compactMap { name -> (UInt64, String)? in
                guard name.hasSuffix(suffix) else { return nil }
                let digits = name.dropLast(suffix.count)
                guard digits.count == 20, digits.allSatisfy(\.isASCII), let number = UInt64(digits) else { return nil }
                return (number, directory + "/" + name)
            }.sorted { $0.0 < $1.0 }
        }
        let blockFiles = numbered(".blk")
        let segments = numbered(".seg")
        if blockFiles.isEmpty, let first = segments.first {
            let bytes = try readBytes(first.path)
            try check(bytes.count >= 10, "a segment with a version field")
            if u16(bytes, 8) == 1 { return try readFormat1(segments) }
        }
        return try readFormat2(blockFiles: blockFiles, segments: segments)
    }

    // MARK: Format 2

    static func readFormat2(blockFiles: [(first: UInt64, path: String)], segments: [(first: UInt64, path: String)]) throws -> IndependentLog {
        typealias F = IndependentFormat2
        var log = IndependentLog(format: 2)
        var identity: [UInt8]?  // log_id ‖ origin_sequence ‖ origin_hash, the same in every file
        var head: [UInt8] = []
        var time = Int64.min
        var next: UInt64 = 1
        func adopt(_ logID: [UInt8], _ originSequence: UInt64, _ originHash: [UInt8]) throws {
            let mine = logID + le(originSequence) + originHash
            if let identity {
                try check(identity == mine, "one log_id and origin in every file")
            } else {
                identity = mine
                head = F.anchor(logID: logID, originSequence: originSequence, originHash: originHash)
            }
        }
        func hash(_ event: F.Event) {
            head = F.step(head, F.leaf(sequence: event.sequence, time: event.time, digest: F.digest(event)))
            log.events.append(.init(sequence: event.sequence, time: event.time, payload: event.payload))
        }

        for file in blockFiles {
            let bytes = try readBytes(file.path)
            let header = try F.blockFileHeader(bytes)
            try check(header.firstSequence == file.first && file.first == next, "\(file.path) starting at sequence \(next)")
            try adopt(header.logID, header.originSequence, header.originHash)
            var offset = F.blockFileHeaderSize
            for _ in 0..<header.blockCount {
                let block = try F.block(bytes, at: offset)
                try check(block.firstSequence == next, "a block of \(file.path) at \(offset) starting at \(next)")
                // The cheap links between blocks, then verify's rehash against chain_after.
                try check(block.chainBefore == head && block.timeBefore == time, "chain_before and time_before at \(offset)")
                block.events.forEach(hash)
                try check(block.chainAfter == head, "chain_after of the block at \(offset) of \(file.path)")
                time = block.lastTime
                next += UInt64(block.eventCount)
                offset = block.end
                log.blockKinds.insert([block.codec, block.layout])
                log.fieldsSeen.formUnion(block.fieldsSeen)
            }
            try check(offset == bytes.count, "\(file.path)'s blocks ending at its end")
            try check(next - file.first == header.eventCount, "\(file.path)'s event_count")
            log.blockFiles += 1
        }
        // "a block file's range hides any segment inside it" (a compaction stopped before step 6).
        let covered = next - 1
        for file in segments {
            if file.first <= covered {
                log.hiddenSegments += 1
                continue
            }
            let bytes = try readBytes(file.path)
            let header = try F.segmentHeader(bytes)
            try check(header.firstSequence == file.first && file.first == next, "\(file.path) starting at sequence \(next)")
            try adopt(header.logID, header.originSequence, header.originHash)
            try check(header.chainBefore == head && header.timeBefore == time, "\(file.path)'s chain_before and time_before")
            var offset = F.segmentHeaderSize
            while let record = try F.record(bytes, at: offset, firstSequence: next, timeBefore: time) {
                record.events.forEach(hash)
                time = record.events.last!.time
                next += UInt64(record.events.count)
                offset = record.end
                log.recordCodecs.insert(record.codec)
            }
            log.segments += 1
        }
        try check(identity != nil, "a format-2 log with at least one data file")
        log.head = head
        return log
    }

    // MARK: Format 1

    static func readFormat1(_ segments: [(first: UInt64, path: String)]) throws -> IndependentLog {
        var log = IndependentLog(format: 1)
        var logID: [UInt8]?
        var previous: [UInt8] = []
        var lastTime = Int64.min
        var next: UInt64 = 1
        for file in segments {
            let bytes = try readBytes(file.path)
            try check(bytes.count >= 64 && Array(bytes[0..<8]) == Array("VTLOGSEG".utf8), "magic VTLOGSEG")
            try check(u16(bytes, 8) == 1, "segment version 1 in a format-1 log")
            try check(bytes[10..<16].allSatisfy { $0 == 0 } && bytes[48..<60].allSatisfy { $0 == 0 }, "zero reserved bytes")
            try check(crc32c(bytes[0..<60]) == u32(bytes, 60), "the segment's header_crc")
            try check(u64(bytes, 16) == file.first && file.first == next, "\(file.path) starting at sequence \(next)")
            if let logID {
                try check(Array(bytes[24..<40]) == logID, "one log_id in every segment")
            } else {
                logID = Array(bytes[24..<40])
                previous = sha256(Array(bytes[0..<64]))  // the first batch names the first header's hash
            }
            var offset = 64
            while true {
                // The end of data: the file's end, or 84 zero bytes (or zeros to the end).
                let window = bytes[offset..<min(offset + 84, bytes.count)]
                if window.allSatisfy({ $0 == 0 }) {
                    try check(bytes[offset...].allSatisfy { $0 == 0 }, "only zeros after the end of data")
                    break
                }
                try check(offset + 84 <= bytes.count, "a whole batch header at \(offset)")
                let h = Array(bytes[offset..<offset + 84])
                try check(Array(h[0..<4]) == Array("VTLB".utf8) && h[4] == 1, "magic VTLB, version 1 at \(offset)")
                try check(crc32c(h[0..<80]) == u32(h, 80), "the batch's header_crc at \(offset)")
                try check(h[5] <= 1 && h[6] == 0 && h[7] == 0, "a known codec and zero reserved bytes")
                let first = u64(h, 8)
                let count = Int(u32(h, 16))
                let stored = Int(u32(h, 20))
                let rawLength = Int(u32(h, 24))
                let firstTime = i64(h, 28)
                try check(first == next && count >= 1, "a batch at \(offset) of at least one event from \(next)")
                try check(rawLength <= 64 << 20 && (h[5] == 1 || stored == rawLength), "raw_length rules")
                try check(firstTime >= lastTime && i64(h, 36) >= firstTime, "times that never decrease")
                try check(Array(h[44..<76]) == previous, "previous_hash at \(offset)")
                try check(offset + 84 + stored <= bytes.count, "a whole payload at \(offset)")
                let payload = Array(bytes[offset + 84..<offset + 84 + stored])
                try check(crc32c(h[0..<76] + payload) == u32(h, 76), "batch_crc at \(offset)")
                let raw = h[5] == 1 ? try unzstd(payload, rawLength: rawLength, singleFrame: false) : payload
                var position = 0
                var time = firstTime
                for index in 0..<count {
                    let delta = try varint(raw, &position)
                    try check(index > 0 || delta == 0, "a first time_delta of 0")
                    let length = Int(try varint(raw, &position))
                    try check(length <= raw.count - position, "a length within the raw events")
                    time = try IndependentFormat2.advance(time, by: delta)
                    log.events.append(.init(sequence: next, time: time, payload: Array(raw[position..<position + length])))
                    position += length
                    next += 1
                }
                try check(position == raw.count && time == i64(h, 36), "events that end at raw_length and last_timestamp")
                lastTime = time
                previous = sha256(h + payload)
                offset += 84 + stored
                log.batchCodecs.insert(h[5])
            }
            log.segments += 1
        }
        try check(logID != nil, "a format-1 log with at least one segment")
        log.head = previous
        return log
    }
}
