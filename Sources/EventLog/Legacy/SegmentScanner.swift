import FileIO

/// One valid batch found by a ``SegmentScanner``.
struct ScannedBatch {
    let header: BatchHeader
    /// Offset of the batch header in the segment.
    let offset: Int64
    /// The stored payload; valid until the scanner's next call.
    let stored: UnsafeRawBufferPointer
    /// SHA-256 of the batch as on disk: what the next batch's `previous_hash` must be.
    let hash: ChainHash
}

/// Something at an offset that is neither a valid batch nor the end of data.
struct Damage: Error {
    let offset: Int64
    let reason: String
    /// The batch header, when it was intact (it says how many events were lost).
    let header: BatchHeader?
    /// True when no crash can explain it (a valid checksum over wrong fields, a broken
    /// chain): corruption wherever it is. False when it may be a torn write.
    let definite: Bool
}

/// Walks the batches of one segment, checking each fully: header checksum, expected sequence,
/// chain link, payload presence and batch checksum (FORMAT.md, "Recovery and damage").
///
/// It never decides what damage means; ``classify(_:isLastSegment:)`` applies the rules.
final class SegmentScanner {
    enum Step {
        case batch(ScannedBatch)
        /// The end of the segment's data at this offset (the file's end or a zero tail).
        case end(Int64)
        case damaged(Damage)
    }

    let path: String
    let window: ReadWindow
    private(set) var position: Int64
    private(set) var expectedSequence: UInt64
    /// The hash the next batch must name, when known (unknown when starting mid-segment).
    private(set) var previousHash: ChainHash?

    init(path: String, window: ReadWindow, position: Int64, expectedSequence: UInt64, previousHash: ChainHash?) {
        self.path = path
        self.window = window
        self.position = position
        self.expectedSequence = expectedSequence
        self.previousHash = previousHash
    }

    /// Reads the next batch. Advances only past valid batches; damage and the end leave the
    /// position where they were found, so a follower can try the same place again later.
    func next() throws -> Step {
        let headerSize = LegacyFormat.batchHeaderSize
        guard let head = try window.bytes(at: position, count: headerSize) else {
            let rest = window.cached(at: position, upTo: headerSize)
            if rest.allSatisfy({ $0 == 0 }) { return .end(position) }
            return .damaged(Damage(
                offset: position, reason: "an incomplete batch header (\(rest.count) of \(headerSize) bytes)",
                header: nil, definite: false))
        }
        let header: BatchHeader
        switch BatchHeader.decode(head) {
        case .failure(.zero):
            return .end(position)
        case .failure(.unsupportedVersion(let version)):
            throw LogError(
                .unsupportedVersion,
                "\(path) holds a batch of format version \(version) at offset \(position); this program reads version \(LegacyFormat.batchVersion)",
                file: path, offset: position, sequence: expectedSequence)
        case .failure(let problem):
            let definite = if case .invalidField = problem { true } else { false }
            return .damaged(Damage(offset: position, reason: problem.description, header: nil, definite: definite))
        case .success(let decoded):
            header = decoded
        }
        guard header.firstSequence == expectedSequence else {
            return .damaged(Damage(
                offset: position, reason: "a batch that starts at sequence \(header.firstSequence)",
                header: header, definite: true))
        }
        if let previousHash, header.previousHash != previousHash {
            return .damaged(Damage(
                offset: position,
                reason: "a batch whose previous_hash does not match the batch before it (the hash chain is broken)",
                header: header, definite: true))
        }
        guard let whole = try window.bytes(at: position, count: header.totalSize) else {
            let present = window.cached(at: position, upTo: header.totalSize).count - headerSize
            return .damaged(Damage(
                offset: position,
                reason: "an incomplete batch (\(max(0, present)) of \(header.storedLength) payload bytes)",
                header: header, definite: false))
        }
        let headerBytes = UnsafeRawBufferPointer(rebasing: whole[0..<headerSize])
        let stored = UnsafeRawBufferPointer(rebasing: whole[headerSize...])
        guard BatchHeader.batchChecksum(header: headerBytes, payload: stored) == header.batchCRC else {
            return .damaged(Damage(
                offset: position, reason: "a batch that fails its checksum", header: header, definite: false))
        }
        let batch = ScannedBatch(
            header: header, offset: position, stored: stored,
            hash: ChainHash.ofBatch(header: headerBytes, payload: stored))
        position += Int64(header.totalSize)
        expectedSequence = header.lastSequence + 1
        previousHash = batch.hash
        return .batch(batch)
    }

    /// What damage means here (FORMAT.md, "Recovery and damage"): a torn tail only when it is
    /// in the last segment and no valid batch header starts anywhere after it.
    enum Meaning {
        case tornTail
        case corruption
        /// The bytes were being written when first read and are a valid batch now: read again.
        case inProgress
    }

    func classify(_ damage: Damage, isLastSegment: Bool) throws -> Meaning {
        if damage.definite { return .corruption }
        if isLastSegment, try validHeaderOffset(after: damage.offset) == nil { return .tornTail }
        // A valid batch further on (or a later segment) means the writer finished writing this
        // place before it wrote that, and bytes never change once written past. A reader beside
        // the writer may have caught them half-copied, so read them once more before judging.
        window.invalidate()
        let fresh = SegmentScanner(
            path: path, window: window, position: damage.offset, expectedSequence: expectedSequence,
            previousHash: previousHash)
        if case .batch = try fresh.next() { return .inProgress }
        return .corruption
    }

    /// The offset of the first valid batch header (magic, version, checksum, and a sequence
    /// not before the expected one) that starts after `offset`.
    func validHeaderOffset(after offset: Int64) throws -> Int64? {
        let headerSize = LegacyFormat.batchHeaderSize
        let magic = LegacyFormat.batchMagic
        var chunkStart = offset + 1
        while true {
            let chunk = try window.available(at: chunkStart, upTo: 1 << 20)
            if chunk.count < headerSize { return nil }
            var index = 0
            while index + headerSize <= chunk.count {
                if chunk[index] == magic[0], chunk[index + 1] == magic[1], chunk[index + 2] == magic[2],
                    chunk[index + 3] == magic[3],
                    case .success(let header) = BatchHeader.decode(UnsafeRawBufferPointer(rebasing: chunk[index...])),
                    header.firstSequence >= expectedSequence
                {
                    return chunkStart + Int64(index)
                }
                index += 1
            }
            // Overlap by a header's length so that a header across chunks is still seen.
            chunkStart += Int64(chunk.count - headerSize + 1)
        }
    }
}
