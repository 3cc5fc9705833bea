import EventLog
import Proofs

/// The Merkle tree of one log's events (docs/PROOFS.md, "The tree"), read from the log: leaf i
/// is event i + 1's chain leaf, the same for an erased event as for the event before its erasure.
/// A proof reads the log's events once, from the first through the tree's size, hashing each
/// run of the proof's path as it passes (``StreamingProver``): memory stays a few kilobytes at
/// any size; time grows with the size (the compact ranges of PROOFS.md, "Keeping the tree so
/// that a proof reads no payload", are what will bound it).
///
/// ```swift
/// let tree = try LogTree(reader: reader)
/// let proof = try tree.inclusion(of: 5, size: 9)      // ProofFile
/// proof.verify()
/// ```
public struct LogTree {
    let reader: LogReader
    public let logID: [UInt8]
    /// The log's last event: the largest tree.
    public let size: UInt64

    public init(reader: LogReader) throws {
        self.reader = reader
        do {
            guard let identity = try reader.identity() else {
                throw ProofError("the log at \(reader.directory) has no events yet, or is in format 1, whose events have no leaves (vt upgrade)")
            }
            logID = identity.logID
            size = try reader.lastSequence()
        } catch let error as LogError {
            throw ProofError("the log at \(reader.directory) cannot be read: \(error.message)")
        }
    }

    /// The leaf of an event as the log holds it.
    public static func leaf(of event: LogEvent) -> TreeHash {
        let digest = event.erasedDigest.map(Array.init) ?? event.payload.withUnsafeBytes { EventChain.digest(of: $0) }
        return TreeHash(EventChain.leaf(sequence: event.sequence, time: event.timestamp, digest: digest).bytes)!
    }

    /// That event `sequence` is in the tree of `size` events (the whole log by default).
    public func inclusion(of sequence: UInt64, size: UInt64? = nil, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> ProofFile {
        let size = try checked(size)
        guard sequence >= 1, sequence <= size else {
            throw ProofError("event \(sequence) is not in the tree of \(size) events (events are numbered from 1)")
        }
        var prover = StreamingProver(ranges: ProofShape.inclusion(index: sequence - 1, size: size), roots: [size], keeping: [sequence - 1])
        try feed(&prover, progress: progress)
        return ProofFile(
            logID: logID,
            claim: .inclusion(
                sequence: sequence, leaf: prover.kept[sequence - 1]!, proof: InclusionProof(index: sequence - 1, size: size, path: prover.path)),
            root: prover.root(of: size)!)
    }

    /// That the tree of `newSize` events (the whole log by default) extends the tree of `oldSize`.
    public func consistency(from oldSize: UInt64, to newSize: UInt64? = nil, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> ProofFile {
        let newSize = try checked(newSize)
        guard oldSize >= 1, oldSize <= newSize else {
            throw ProofError("a tree of \(newSize) events extends trees of 1 to \(newSize) events, not \(oldSize)")
        }
        var prover = StreamingProver(ranges: ProofShape.consistency(from: oldSize, to: newSize), roots: [oldSize, newSize])
        try feed(&prover, progress: progress)
        return ProofFile(
            logID: logID,
            claim: .consistency(oldRoot: prover.root(of: oldSize)!, proof: ConsistencyProof(oldSize: oldSize, newSize: newSize, path: prover.path)),
            root: prover.root(of: newSize)!)
    }

    /// The root of the tree of `size` events (the whole log by default; the empty tree's hash
    /// for 0 events, as RFC 6962 defines it: a new device's log has none yet).
    public func root(size: UInt64? = nil, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> TreeHash {
        if (size ?? self.size) == 0 { return .empty }
        let size = try checked(size)
        var prover = StreamingProver(ranges: [], roots: [size])
        try feed(&prover, progress: progress)
        return prover.root(of: size)!
    }

    private func checked(_ asked: UInt64?) throws -> UInt64 {
        let size = asked ?? self.size
        guard size >= 1 else { throw ProofError("a tree has at least 1 event") }
        guard size <= self.size else { throw ProofError("the log holds \(self.size) events, not \(size)") }
        return size
    }

    private func feed(_ prover: inout StreamingProver, progress: ((UInt64, UInt64) -> Void)?) throws {
        let end = prover.end
        do {
            let cursor = try reader.events(from: 1, through: end)
            var index: UInt64 = 0
            while let event = try cursor.next() {
                guard event.sequence == index + 1 else { throw ProofError("the log skips from event \(index) to \(event.sequence)") }
                prover.add(Self.leaf(of: event), at: index)
                index += 1
                if index & 0xFFFF == 0 { progress?(index, end) }
            }
            guard index == end else { throw ProofError("the log ends at event \(index), before \(end)") }
        } catch let error as LogError {
            throw ProofError("the log at \(reader.directory) cannot be read: \(error.message)")
        }
    }
}
