import FileIO

/// Format 1's verification: every segment, batch by batch, every checksum, sequence, time and
/// chain link, and each sparse index against the batches it names (FORMAT.md, part "Format 1").
enum LegacyVerifier {
    /// The walk of ``LogVerifier/verify(directory:fileSystem:keys:payloadCodec:progress:)`` and of
    /// ``LegacyRepair``: records each damage (corruption or torn tail) in log order.
    static func walk(
        _ reader: LegacyReading, report: inout VerificationReport, progress: ((Int64, Int64) -> Void)?,
        stopAtFirstDamage: Bool
    ) throws {
        let fileSystem = reader.fileSystem
        let directory = reader.directory
        let segments = reader.segments
        var total: Int64 = 0
        for first in segments {
            total += (try? fileSystem.status(SegmentFiles.segmentPath(directory, first)))??.size ?? 0
        }
        var done: Int64 = 0
        var expected: UInt64 = 1
        var previousHash = reader.genesis
        var lastTime: LogTimestamp? = nil
        let decompressor = ZstdDecompressor()

        segmentLoop: for (position, first) in segments.enumerated() {
            let isLast = position == segments.count - 1
            let path = SegmentFiles.segmentPath(directory, first)
            report.segments += 1
            if first != expected {
                report.problems.append(.init(
                    kind: .corruption, file: path, offset: 0, sequence: expected,
                    message: "the segment starts at sequence \(first), but the log before it ends at \(expected - 1)"))
                if stopAtFirstDamage { return }
                previousHash = nil
            }
            let segment: SegmentHandle
            do {
                segment = try reader.openSegment(first)
            } catch let error as LogError where error.code != .io {
                report.problems.append(.init(kind: .corruption, file: path, offset: 0, sequence: first, message: error.message))
                if stopAtFirstDamage { return }
                expected = first
                previousHash = nil
                continue segmentLoop
            }
            defer { segment.close() }
            let scanner = segment.scannerFromStart(previousHash: previousHash)
            var scanned: [Int64: BatchHeader] = [:]
            scan: while true {
                switch try scanner.next() {
                case .batch(let batch):
                    let header = batch.header
                    scanned[batch.offset] = header
                    if case .failure(let reason) = DecodedBatch.decode(header, stored: batch.stored, decompressor: decompressor) {
                        report.problems.append(.init(
                            kind: .corruption, file: path, offset: batch.offset, sequence: header.firstSequence,
                            message: reason.description))
                        if stopAtFirstDamage { return }
                        break scan
                    }
                    if let lastTime, header.firstTimestamp < lastTime {
                        report.problems.append(.init(
                            kind: .corruption, file: path, offset: batch.offset, sequence: header.firstSequence,
                            message: "the batch's time \(header.firstTimestamp) is before the previous event's \(lastTime)"))
                        if stopAtFirstDamage { return }
                    }
                    lastTime = header.lastTimestamp
                    report.batches += 1
                    report.events += UInt64(header.eventCount)
                    report.storedBytes += Int64(header.totalSize)
                    report.rawBytes += Int64(header.rawLength)
                    report.lastSequence = header.lastSequence
                    report.headHash = batch.hash
                    done += Int64(header.totalSize)
                    if report.batches % 256 == 0 { progress?(done, total) }
                case .end(let offset):
                    if let stray = try scanner.window.nonZeroOffset(from: offset) {
                        let damage = Damage(
                            offset: offset, reason: "non-zero bytes at offset \(stray), after the end of data",
                            header: nil, definite: false)
                        if try !record(damage, scanner, isLast: isLast, path: path, report: &report) { continue scan }
                        if stopAtFirstDamage { return }
                    }
                    report.storedBytes += Int64(LegacyFormat.segmentHeaderSize)
                    break scan
                case .damaged(let damage):
                    if try !record(damage, scanner, isLast: isLast, path: path, report: &report) { continue scan }
                    if stopAtFirstDamage { return }
                    report.storedBytes += Int64(LegacyFormat.segmentHeaderSize)
                    break scan
                }
            }
            expected = scanner.expectedSequence
            previousHash = scanner.previousHash
            checkIndex(first, scanned: scanned, path: path, reader: reader, report: &report)
        }
        progress?(total, total)
    }

    /// Records damage as a problem and returns true; returns false when the bytes were only
    /// caught mid-write by a writer beside us and are valid now (scan on).
    private static func record(
        _ damage: Damage, _ scanner: SegmentScanner, isLast: Bool, path: String, report: inout VerificationReport
    ) throws -> Bool {
        let kind: VerificationReport.Problem.Kind
        switch try scanner.classify(damage, isLastSegment: isLast) {
        case .inProgress: return false
        case .tornTail: kind = .tornTail
        case .corruption: kind = .corruption
        }
        report.problems.append(.init(
            kind: kind, file: path, offset: damage.offset, sequence: scanner.expectedSequence,
            message: kind == .tornTail
                ? "an incomplete last batch (\(damage.reason)): an append in progress, or a crash that opening the log for writing will recover"
                : damage.reason))
        return true
    }

    private static func checkIndex(
        _ first: UInt64, scanned: [Int64: BatchHeader], path: String, reader: LegacyReading,
        report: inout VerificationReport
    ) {
        let indexPath = SegmentFiles.indexPath(reader.directory, first)
        guard let index = SegmentHandle.loadIndex(directory: reader.directory, firstSequence: first, fileSystem: reader.fileSystem)
        else {
            report.problems.append(.init(kind: .index, file: indexPath, message: "the index is missing"))
            return
        }
        if index.damaged {
            report.problems.append(.init(
                kind: .index, file: indexPath, offset: Int64(index.validLength),
                message: "the index is damaged after its first \(index.entries.count) entries"))
        }
        for entry in index.entries {
            guard let header = scanned[entry.offset], header.firstSequence == entry.sequence,
                header.firstTimestamp == entry.timestamp
            else {
                report.problems.append(.init(
                    kind: .index, file: indexPath, offset: entry.offset, sequence: entry.sequence,
                    message: "an index entry points at no batch with its sequence and time"))
                return
            }
        }
    }
}
