/// Prints format-2 files field by field, as docs/FORMAT.md's worked example shows them, from
/// the document's tables alone (through ``IndependentFormat2``). Every checksum and every
/// checkpoint is checked as it is printed, and the event chain is recomputed step by step from
/// the document's definitions; a disagreement throws instead of printing.
enum Format2Dump: FormatBytes {
    typealias F = IndependentFormat2

    /// Payloads at least this long are elided (length and digest shown instead of the bytes).
    static let elideFrom = 64

    /// `stages` are (title, files) in order; `log` is the independent reading of the last
    /// stage, whose events name the chain's checkpoints.
    static func describe(stages: [(title: String, files: [(name: String, bytes: [UInt8])])], log: IndependentLog) throws -> String {
        let first = stages[0].files[0].bytes
        let logID = Array(first[24..<40])
        var heads = [F.anchor(logID: logID, originSequence: 0, originHash: [UInt8](repeating: 0, count: 32))]
        for event in log.events {
            heads.append(F.step(heads.last!, F.leaf(sequence: event.sequence, time: event.time, digest: Self.sha256(event.payload))))
        }
        try Self.check(heads.last! == log.head, "the dump's chain equal to the reader's")
        var dump = Dump(events: log.events, heads: heads)
        for stage in stages {
            dump.out += "\(stage.title)\n"
            for file in stage.files {
                dump.out += "\n\(file.name) (\(file.bytes.count) bytes)\n\n"
                if file.name.hasSuffix(".seg") { try dump.segment(file.bytes) } else { try dump.blockFile(file.bytes) }
            }
            dump.out += "\n"
        }
        dump.chain()
        return dump.out
    }

    struct Dump: FormatBytes {
        let events: [IndependentLog.Event]
        /// head(i) at index i; head(0) is the anchor.
        let heads: [[UInt8]]
        var out = ""

        /// The name of a stored checkpoint, checked against the chain at `sequence`.
        func checkpoint(_ hash: [UInt8], at sequence: UInt64) throws -> String {
            try Self.check(heads[Int(sequence)] == hash, "the checkpoint at sequence \(sequence)")
            return sequence == 0 ? "anchor = head(0)" : "head(\(sequence))"
        }

        func timeText(_ time: Int64) -> String { time == Int64.min ? "\(time) (−2^63)" : "\(time)" }

        /// The 24 bytes a segment header and a block file header share: magic, version,
        /// reserved, first sequence.
        mutating func opening(_ title: String, _ b: [UInt8], magic: String, firstSequence: UInt64) {
            out += "\(title)\n"
            out += Self.field(b, 0, 8, "magic \"\(magic)\"")
            out += Self.field(b, 8, 2, "version 2")
            out += Self.field(b, 10, 6, "reserved")
            out += Self.field(b, 16, 8, "first_sequence \(firstSequence)")
        }

        mutating func segment(_ b: [UInt8]) throws {
            let header = try F.segmentHeader(b)
            opening("segment header", b, magic: "VTLOGSEG", firstSequence: header.firstSequence)
            out += Self.field(b, 24, 16, "log_id")
            out += Self.field(b, 40, 8, "created_at \(header.createdAt)")
            out += Self.field(b, 48, 8, "time_before \(timeText(header.timeBefore))")
            out += Self.field(b, 56, 32, "chain_before = \(try checkpoint(header.chainBefore, at: header.firstSequence - 1))")
            out += Self.field(b, 88, 8, "origin_sequence \(header.originSequence)")
            out += Self.field(b, 96, 32, "origin_hash (zero: not an upgraded log)")
            out += Self.field(b, 128, 4, "reserved")
            out += Self.field(b, 132, 4, "header_crc = CRC32C(bytes 0..<132)")
            var offset = F.segmentHeaderSize
            var next = header.firstSequence
            var time = header.timeBefore
            while let record = try F.record(b, at: offset, firstSequence: next, timeBefore: time) {
                let last = record.events.last!
                out += "\nrecord at offset \(offset): \(eventRange(record.events))\n"
                out += Self.field(b, offset, record.headLength,
                             "head \(record.storedLength * 2 + Int(record.codec)) = stored_length \(record.storedLength) × 2 + codec \(record.codec) (\(record.codec == 0 ? "raw" : "zstd"))")
                if record.codec == 0 {
                    rows(record.events, shownAt: record.bodyStart, source: b, indent: "")
                } else {
                    out += Self.field(b, record.bodyStart, record.storedLength, "body: one zstd frame")
                }
                out += Self.field(b, record.crcOffset, 4, "record_crc = CRC32C(head + body)")
                if record.codec == 1 {
                    out += "  the frame's content, \(record.raw.count) bytes (offsets within it):\n"
                    rows(record.events, shownAt: 0, source: record.raw, indent: "  ")
                }
                next = last.sequence + 1
                time = last.time
                offset = record.end
            }
        }

        mutating func blockFile(_ b: [UInt8]) throws {
            let header = try F.blockFileHeader(b)
            opening("file header", b, magic: "VTLOGBLK", firstSequence: header.firstSequence)
            out += Self.field(b, 24, 8, "event_count \(header.eventCount)")
            out += Self.field(b, 32, 16, "log_id")
            out += Self.field(b, 48, 8, "origin_sequence \(header.originSequence)")
            out += Self.field(b, 56, 32, "origin_hash (zero)")
            out += Self.field(b, 88, 8, "created_at \(header.createdAt)")
            out += Self.field(b, 96, 4, "block_count \(header.blockCount)")
            out += Self.field(b, 100, 16, "reserved")
            out += Self.field(b, 116, 4, "header_crc = CRC32C(bytes 0..<116)")
            var offset = F.blockFileHeaderSize
            for _ in 0..<header.blockCount {
                let block = try F.block(b, at: offset)
                try Self.check(block.flags == 0, "the example erases nothing")
                out += "\nblock at offset \(offset): \(eventRange(block.events))\n"
                out += Self.field(b, offset, 4, "magic \"VTBK\"")
                out += Self.field(b, offset + 4, 1, "version 2")
                out += Self.field(b, offset + 5, 1, "codec \(block.codec) (\(block.codec == 0 ? "raw" : "zstd"))")
                out += Self.field(b, offset + 6, 1, "layout \(block.layout) (\(block.layout == 0 ? "rows" : "columns"))")
                out += Self.field(b, offset + 7, 1, "flags 0")
                out += Self.field(b, offset + 8, 8, "first_sequence \(block.firstSequence)")
                out += Self.field(b, offset + 16, 4, "event_count \(block.eventCount)")
                out += Self.field(b, offset + 20, 4, "stored_length \(block.storedLength)")
                out += Self.field(b, offset + 24, 4, "raw_length \(block.rawLength)")
                out += Self.field(b, offset + 28, 8, "time_before \(timeText(block.timeBefore))")
                out += Self.field(b, offset + 36, 8, "last_time \(block.lastTime)")
                out += Self.field(b, offset + 44, 32, "chain_before = \(try checkpoint(block.chainBefore, at: block.firstSequence - 1))")
                let last = block.events.last!.sequence
                out += Self.field(b, offset + 76, 32, "chain_after = \(try checkpoint(block.chainAfter, at: last))")
                out += Self.field(b, offset + 108, 4, "payload_crc = CRC32C(stored payload)")
                out += Self.field(b, offset + 112, 4, "header_crc = CRC32C(header bytes 0..<112)")
                let body: (bytes: [UInt8], at: Int, indent: String)
                if block.codec == 0 {
                    body = (b, block.payloadStart, "")
                } else {
                    out += Self.field(b, block.payloadStart, block.storedLength, "payload: one zstd frame")
                    out += "  the frame's content, \(block.raw.count) bytes (offsets within it):\n"
                    body = (block.raw, 0, "  ")
                }
                if block.layout == 0 {
                    rows(block.events, shownAt: body.at, source: body.bytes, indent: body.indent)
                } else {
                    columns(block.events, shownAt: body.at, source: body.bytes, indent: body.indent)
                }
                offset = block.end
            }
        }

        func eventRange(_ events: [F.Event]) -> String {
            events.count == 1 ? "event \(events[0].sequence)" : "events \(events[0].sequence)–\(events.last!.sequence)"
        }

        /// A payload's meaning: its text when short, else its length and digest.
        func payloadText(_ event: F.Event) -> String {
            event.payload.count >= elideFrom
                ? "\(event.payload.count) bytes, SHA-256 \(Self.hexText(Self.sha256(event.payload)))"
                : "\"\(String(decoding: event.payload, as: UTF8.self))\""
        }

        /// Adds `text` with every line indented.
        mutating func put(_ indent: String, _ text: String) {
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                out += indent + line + "\n"
            }
        }

        /// The line that stands for an elided payload's bytes.
        func elided(_ event: F.Event, at offset: Int) -> String {
            String(format: "%04x  ", offset) + "… payload of event \(event.sequence) elided: \(payloadText(event))\n"
        }

        /// Events laid out as rows: one line per event, or for a long payload, its delta and
        /// length and then a note in place of the payload's bytes.
        mutating func rows(_ events: [F.Event], shownAt base: Int, source: [UInt8], indent: String) {
            for event in events {
                let start = base + event.deltaAt.lowerBound
                let label = "event \(event.sequence): time_delta \(event.delta), length \(event.payload.count)"
                if event.payload.count >= elideFrom {
                    let framing = event.payloadAt.lowerBound - event.deltaAt.lowerBound
                    put(indent, Self.field(source, start, framing, label + " → time \(event.time)"))
                    put(indent, elided(event, at: base + event.payloadAt.lowerBound))
                } else {
                    let whole = event.payloadAt.upperBound - event.deltaAt.lowerBound
                    put(indent, Self.field(source, start, whole, label + ", \(payloadText(event)) → time \(event.time)"))
                }
            }
        }

        mutating func columns(_ events: [F.Event], shownAt base: Int, source: [UInt8], indent: String) {
            for event in events {
                let meaning = "time_delta of event \(event.sequence): \(event.delta) → time \(event.time)"
                put(indent, Self.field(source, base + event.deltaAt.lowerBound, event.deltaAt.count, meaning))
            }
            for event in events {
                let meaning = "length of event \(event.sequence): \(event.payload.count)"
                put(indent, Self.field(source, base + event.lengthAt.lowerBound, event.lengthAt.count, meaning))
            }
            for event in events {
                let at = base + event.payloadAt.lowerBound
                if event.payload.count >= elideFrom {
                    put(indent, elided(event, at: at))
                } else {
                    put(indent, Self.field(source, at, event.payload.count, "payload of event \(event.sequence): \(payloadText(event))"))
                }
            }
        }

        /// The chain, step by step, as "The event chain" defines it.
        mutating func chain() {
            out += "the event chain\n\n"
            out += "head(0)   = anchor = SHA-256(02 ‖ \"VTLOG2\" ‖ log_id ‖ u64 origin_sequence 0 ‖ 32 zero bytes)\n"
            out += "          = \(Self.hexText(heads[0]))\n"
            for (index, event) in events.enumerated() {
                let digest = Self.sha256(event.payload)
                let leaf = IndependentFormat2.leaf(sequence: event.sequence, time: event.time, digest: digest)
                let n = event.sequence
                out += "\nevent \(n): sequence \(n), time \(event.time)\n"
                let payload = event.payload.count >= elideFrom
                    ? "the \(event.payload.count)-byte payload" : "\"\(String(decoding: event.payload, as: UTF8.self))\""
                out += "digest(\(n)) = SHA-256(\(payload))\n          = \(Self.hexText(digest))\n"
                out += "leaf(\(n))   = SHA-256(00 ‖ \(spaced(Self.le(n))) ‖ \(spaced(Self.le(event.time))) ‖ digest(\(n)))\n"
                out += "          = \(Self.hexText(leaf))\n"
                out += "head(\(n))   = SHA-256(01 ‖ head(\(n - 1)) ‖ leaf(\(n)))\n          = \(Self.hexText(heads[index + 1]))\n"
            }
            out += "\nthe log's head hash is head(\(events.count)), the last one above\n"
        }

        func spaced(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }
    }
}
