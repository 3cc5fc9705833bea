// Fuzzes format 2's decoders (docs/FORMAT.md, part "Format 2"): hot-tail records read one after
// another as a segment's data, or sealed blocks read one after another as a block file's. A
// record or block that comes out valid must keep what the document promises (times never
// decrease, the counts add up, erased events hold 32-byte digests) and must survive a round
// trip through the encoder; for blocks, the chain it states is rehashed too. Or one of the
// derived files beside a log, a key summary or a tail checkpoint (DerivedFiles.swift). Or a log's
// block file as another device sends it, copied by a sync (CopiedLog.swift).
//
// Input: byte 0 holds the options below; the rest is the data (for a derived file, the bytes
// XORed onto a genuine one).

import EventLog
import FieldColumns
import FuzzSupport

struct Options: OptionSet {
    let rawValue: UInt8
    /// The data is blocks, not records.
    static let blocks = Options(rawValue: 0x01)
    /// Recompute the checksums of each record or block, so mutations reach what they protect.
    static let fixChecksums = Options(rawValue: 0x02)
    /// The data changes a log's key summary (`.keys`).
    static let keySummary = Options(rawValue: 0x04)
    /// The data changes a log's tail checkpoint (`.head`).
    static let tailCheckpoint = Options(rawValue: 0x08)
    /// The data changes a block file of a log that a sync copies from another device.
    static let copiedLog = Options(rawValue: 0x10)
}

/// zstd's fastest level: the round trip checks the field form, not the compression.
nonisolated(unsafe) let fieldCompressor = try! ZstdCompressor(level: 1)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let options = Options(rawValue: data[0])
    var bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let decompressor = ZstdDecompressor()
    if options.contains(.copiedLog) {
        fuzzCopiedLog(bytes)
    } else if options.contains(.keySummary) {
        fuzzKeySummary(bytes, fix: options.contains(.fixChecksums))
    } else if options.contains(.tailCheckpoint) {
        fuzzTailCheckpoint(bytes, fix: options.contains(.fixChecksums))
    } else if options.contains(.blocks) {
        fuzzBlocks(&bytes, fix: options.contains(.fixChecksums), decompressor: decompressor)
    } else {
        fuzzRecords(&bytes, fix: options.contains(.fixChecksums), decompressor: decompressor)
    }
    return 0
}

func fuzzRecords(_ bytes: inout [UInt8], fix: Bool, decompressor: ZstdDecompressor) {
    var position = 0
    var time = LogFormat.timeBeforeFirstEvent
    var sequence: UInt64 = 1
    while position < bytes.count {
        if fix { fixRecordChecksum(&bytes, at: position) }
        let read = bytes.withUnsafeBytes {
            TailRecord.read(UnsafeRawBufferPointer(rebasing: $0[position...]), timeBefore: time, decompressor: decompressor)
        }
        guard case .record(let record) = read else { return }
        require(record.size >= 7 && position + record.size <= bytes.count, "a record of \(record.size) bytes at \(position)")
        let events = record.events(firstSequence: sequence)
        require(events.count == record.eventCount && !events.isEmpty, "a record's events do not add up")
        var previous = time
        for event in events {
            require(event.timestamp.microsecondsSinceEpoch >= previous, "a record's times decrease")
            previous = event.timestamp.microsecondsSinceEpoch
        }
        require(previous == record.lastTime, "a record's last time is not its last event's")
        // Round trip: the same events encoded again read back the same.
        var builder = TailRecordBuilder()
        builder.reset(timeBefore: time)
        for event in events { builder.add(Array(event.payload), at: event.timestamp.microsecondsSinceEpoch) }
        var again: [UInt8] = []
        builder.encode(compressor: nil, into: &again)
        let reread = again.withUnsafeBytes { TailRecord.read($0, timeBefore: time, decompressor: decompressor) }
        guard case .record(let copy) = reread else { fatalError("a re-encoded record does not read back: \(reread)") }
        require(copy.events(firstSequence: sequence) == events, "a re-encoded record reads back other events")
        sequence += UInt64(events.count)
        time = record.lastTime
        position += record.size
    }
}

func fixRecordChecksum(_ bytes: inout [UInt8], at position: Int) {
    var head: UInt64 = 0
    var shift: UInt64 = 0
    var index = position
    while index < bytes.count, index - position < 4 {
        let byte = bytes[index]
        head |= UInt64(byte & 0x7F) << shift
        index += 1
        if byte < 0x80 { break }
        shift += 7
    }
    let end = index + Int(head >> 1)
    guard head >= 4, end + 4 <= bytes.count else { return }
    write(CRC32C.checksum(bytes[position..<end]), to: &bytes, at: end)
}

func fuzzBlocks(_ bytes: inout [UInt8], fix: Bool, decompressor: ZstdDecompressor) {
    let headerSize = 116
    var position = 0
    while position + headerSize <= bytes.count {
        if fix {
            let stored = Int(read(UInt32.self, bytes, position + 20))
            if position + headerSize + stored <= bytes.count {
                write(CRC32C.checksum(bytes[position + headerSize..<position + headerSize + stored]), to: &bytes, at: position + 108)
            }
            write(CRC32C.checksum(bytes[position..<position + 112]), to: &bytes, at: position + 112)
        }
        let decoded: Result<SealedBlock, DamageReason> = bytes.withUnsafeBytes { all in
            switch BlockHeader.decode(UnsafeRawBufferPointer(rebasing: all[position...])) {
            case .failure(let reason): return .failure(reason)
            case .success(let header):
                guard position + header.totalSize <= all.count else { return .failure(DamageReason.incomplete) }
                let stored = UnsafeRawBufferPointer(rebasing: all[position + headerSize..<position + header.totalSize])
                return SealedBlock.decode(header, stored: stored, decompressor: decompressor, payloadCodec: FieldColumnsCodec())
            }
        }
        guard case .success(let block) = decoded else { return }
        let header = block.header
        let events = block.events
        require(events.count == Int(header.eventCount), "a block's events do not add up")
        require(events.first?.sequence == header.firstSequence, "a block's first event is not its first sequence")
        var previous = header.timeBefore
        for event in events {
            require(event.timestamp.microsecondsSinceEpoch >= previous, "a block's times decrease")
            previous = event.timestamp.microsecondsSinceEpoch
        }
        require(previous == header.lastTime, "a block's last time is not its last event's")
        let erased = Set(block.erasedSequences)
        for event in events where erased.contains(event.sequence) {
            require(event.payload.count == LogFormat.digestSize, "an erased event does not hold a digest")
        }
        // Round trip: the same events as a new block, in the same layout, decode the same.
        var builder = BlockBuilder(firstSequence: header.firstSequence, timeBefore: header.timeBefore, chainBefore: header.chainBefore)
        for event in events {
            if erased.contains(event.sequence) {
                builder.addErased(digest: Array(event.payload), at: event.timestamp.microsecondsSinceEpoch)
            } else {
                builder.add(event.payload, at: event.timestamp.microsecondsSinceEpoch)
            }
        }
        var again: [UInt8] = []
        let copyHeader = builder.encode(layout: header.layout, compressor: nil, into: &again)
        let copy = again.withUnsafeBytes {
            SealedBlock.decode(copyHeader, stored: UnsafeRawBufferPointer(rebasing: $0[headerSize...]), decompressor: decompressor, payloadCodec: FieldColumnsCodec())
        }
        guard case .success(let reread) = copy else { fatalError("a re-encoded block does not decode: \(copy)") }
        require(reread.events == events, "a re-encoded block decodes to other events")
        require(reread.erasedSequences == block.erasedSequences, "a re-encoded block lost its erasures")
        // The same events taken apart into field columns (codec 2) come back the same too.
        if header.layout == .columns {
            var fields: [UInt8] = []
            let fieldsHeader = builder.encode(layout: .columns, compressor: fieldCompressor, payloadCodec: FieldColumnsCodec(), into: &fields)
            let fromFields = fields.withUnsafeBytes {
                SealedBlock.decode(fieldsHeader, stored: UnsafeRawBufferPointer(rebasing: $0[headerSize...]), decompressor: decompressor, payloadCodec: FieldColumnsCodec())
            }
            guard case .success(let refolded) = fromFields else { fatalError("a field-columns block does not decode: \(fromFields)") }
            require(refolded.events == events, "a field-columns block decodes to other events")
        }
        // The chain it states holds exactly when the rebuilt block's chain ends where it says.
        require(block.chainHolds() == (copyHeader.chainAfter == header.chainAfter), "the chain check disagrees with a rehash")
        position += header.totalSize
    }
}
