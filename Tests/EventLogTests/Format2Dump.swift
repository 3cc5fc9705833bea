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

        /// The headers' fields in order, `name:size`, as FORMAT.md's tables give them.
        static let segmentHeaderFields = """
            magic:8 version:2 reserved:6 first_sequence:8 log_id:16 created_at:8 time_before:8 chain_before:32 \
            origin_sequence:8 origin_hash:32 reserved:4 header_crc:4
            """
        static let blockFileHeaderFields = """
            magic:8 version:2 reserved:6 first_sequence:8 event_count:8 log_id:16 origin_sequence:8 origin_hash:32 \
            created_at:8 block_count:4 reserved:16 header_crc:4
            """
        static let blockHeaderFields = """
            magic:4 version:1 codec:1 layout:1 flags:1 first_sequence:8 event_count:4 stored_length:4 raw_length:4 \
            time_before:8 last_time:8 chain_before:32 chain_after:32 payload_crc:4 header_crc:4
            """

        /// Prints the header at `base` field by field. `first` and `last` are the sequences of
        /// the events after it, which its checkpoints name.
        mutating func header(_ b: [UInt8], at base: Int, _ fields: String, first: UInt64, last: UInt64) throws {
            var offset = base
            for item in fields.split(separator: " ") {
                let parts = item.split(separator: ":")
                let size = Int(parts[1])!
                out += Self.field(b, offset, size, try meaning(String(parts[0]), b, offset, size, base: base, first: first, last: last))
                offset += size
            }
        }

        /// A field's meaning, from its name and its bytes.
        func meaning(_ name: String, _ b: [UInt8], _ at: Int, _ size: Int, base: Int, first: UInt64, last: UInt64) throws -> String {
            let bytes = Array(b[at..<at + size])
            let number = bytes.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            switch name {
            case "magic": return "magic \"\(String(decoding: bytes, as: UTF8.self))\""
            case "reserved", "log_id": return name
            case "origin_hash": return bytes.allSatisfy { $0 == 0 } ? "origin_hash (zero: not an upgraded log)" : name
            case "codec": return "codec \(number) (\(number == 0 ? "raw" : "zstd"))"
            case "layout": return "layout \(number) (\(number == 0 ? "rows" : "columns"))"
            case "created_at", "time_before", "last_time": return "\(name) \(timeText(Int64(bitPattern: number)))"
            case "chain_before": return "chain_before = \(try checkpoint(bytes, at: first - 1))"
            case "chain_after": return "chain_after = \(try checkpoint(bytes, at: last))"
            case "payload_crc": return "payload_crc = CRC32C(stored payload)"
            case "header_crc": return "header_crc = CRC32C(header bytes 0..<\(at - base))"
            default: return "\(name) \(number)"
            }
        }

        mutating func segment(_ b: [UInt8]) throws {
            let header = try F.segmentHeader(b)
            out += "segment header\n"
            try self.header(b, at: 0, Self.segmentHeaderFields, first: header.firstSequence, last: header.firstSequence)
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
            out += "file header\n"
            try self.header(b, at: 0, Self.blockFileHeaderFields, first: header.firstSequence, last: header.firstSequence + header.eventCount - 1)
            var offset = F.blockFileHeaderSize
            for _ in 0..<header.blockCount {
                let block = try F.block(b, at: offset)
                try Self.check(block.flags == 0, "the example erases nothing")
                out += "\nblock at offset \(offset): \(eventRange(block.events))\n"
                try self.header(b, at: offset, Self.blockHeaderFields, first: block.firstSequence, last: block.events.last!.sequence)
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
