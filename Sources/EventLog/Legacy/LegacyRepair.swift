import FileIO

/// Format 1's repair plan (``LogRepair``): the first damage verification finds, and the cut there.
enum LegacyRepair {
    static func plan(_ reader: LegacyReading, keys: BlockKeys?) throws -> RepairPlan {
        let directory = reader.directory, fileSystem = reader.fileSystem
        var plan = RepairPlan()
        plan.directory = directory
        plan.headerSize = Int64(LegacyFormat.segmentHeaderSize)
        var report = VerificationReport()
        try LegacyVerifier.walk(reader, report: &report, progress: nil, stopAtFirstDamage: true)
        guard let damage = report.problems.first(where: \.isDamage) else { return plan }
        plan.damage = damage
        let segmentPath = damage.file.hasSuffix(LogFiles.segmentExtension) ? damage.file : nil
        let all = reader.segments.map { SegmentFiles.segmentPath(directory, $0) }
        let cutAt = segmentPath.flatMap { all.firstIndex(of: $0) } ?? 0
        plan.segment = all[cutAt]
        plan.offset = damage.offset ?? 0
        plan.laterSegments = Array(all[(cutAt + 1)...])
        plan.firstDroppedSequence = damage.sequence ?? report.lastSequence + 1
        let cutSize = (try fileSystem.status(all[cutAt]))?.size ?? 0
        plan.bytes = max(0, cutSize - plan.offset) + (try LogRepair.sizes(of: plan.laterSegments, fileSystem))
        plan.lastDroppedSequence = try lastIntactSequence(reader, plan: plan, from: cutAt)
        return plan
    }

    /// The highest last sequence named by an intact batch header after the cut.
    private static func lastIntactSequence(_ reader: LegacyReading, plan: RepairPlan, from position: Int) throws -> UInt64? {
        var best: UInt64? = nil
        for first in reader.segments[position...] {
            guard let segment = try? reader.openSegment(first) else { continue }
            defer { segment.close() }
            var offset = first == reader.segments[position] ? plan.offset : Int64(LegacyFormat.segmentHeaderSize) - 1
            let scanner = segment.scannerFromStart(previousHash: nil)
            while let found = try scanner.validHeaderOffset(after: offset) {
                if let head = try segment.window.bytes(at: found, count: LegacyFormat.batchHeaderSize),
                    case .success(let header) = BatchHeader.decode(head)
                {
                    best = max(best ?? 0, header.lastSequence)
                }
                offset = found
            }
        }
        return best
    }
}
