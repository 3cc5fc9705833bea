import EventLog
import Proofs

/// The Merkle tree of one log's events (docs/PROOFS.md, "The tree"), read from the log: leaf i
/// is event i + 1's chain leaf, the same for an erased event as for the event before its erasure.
/// A proof hashes each run of the proof's path as its leaves pass (``StreamingProver``), in a
/// few kilobytes at any size; with a roots file (``TreeRoots``) a chunk of 4,096 leaves passes
/// as its root, so a proof reads the events of a few chunks only, once the file is made.
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
    /// The chunks' roots, read and grown as proofs pass (nil: every leaf is read each time).
    let roots: TreeRoots?
    /// Whether chunks read whole are added to the roots file (not for a log not yet trusted).
    let growsRoots: Bool

    /// - Parameters:
    ///   - rootsFile: where the chunks' roots are kept (docs/PROOFS.md, "The roots file"); nil
    ///     to hash every leaf each time.
    ///   - growsRoots: false to read the file and never add to it: a log another store offers is
    ///     checked against the roots of this store's copy of it, and must not write its own.
    public init(reader: LogReader, rootsFile: String? = nil, growsRoots: Bool = true) throws {
        self.reader = reader
        self.growsRoots = growsRoots
        do {
            guard let identity = try reader.identity() else {
                throw ProofError("the log at \(reader.directory) has no events yet, or is in format 1, whose events have no leaves (vt upgrade)")
            }
            logID = identity.logID
            size = try reader.lastSequence()
            roots = rootsFile.map { TreeRoots(path: $0, logID: identity.logID) }
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

    /// The roots of the trees of each of `sizes` events, in one pass over the log (0 events:
    /// the empty tree's hash).
    public func roots(of sizes: [UInt64]) throws -> [UInt64: TreeHash] {
        var found: [UInt64: TreeHash] = sizes.contains(0) ? [0: .empty] : [:]
        let wanted = try Set(sizes.filter { $0 > 0 }.map { try checked($0) }).sorted()
        guard !wanted.isEmpty else { return found }
        var prover = StreamingProver(ranges: [], roots: wanted)
        try feed(&prover, progress: nil)
        for size in wanted { found[size] = prover.root(of: size)! }
        return found
    }

    private func checked(_ asked: UInt64?) throws -> UInt64 {
        let size = asked ?? self.size
        guard size >= 1 else { throw ProofError("a tree has at least 1 event") }
        guard size <= self.size else { throw ProofError("the log holds \(self.size) events, not \(size)") }
        return size
    }

    /// Whether `range`, a chunk, goes to the prover as its kept root.
    private func takenWhole(_ range: Range<UInt64>, _ prover: StreamingProver) -> Bool {
        guard range.count == TreeRoots.chunk, let roots else { return false }
        return Int(range.lowerBound / TreeRoots.chunk) < roots.roots.count && prover.takesWhole(range)
    }

    /// Gives the prover every leaf through its end, chunk by chunk: a chunk whose root is kept
    /// and that the prover takes whole goes as that root; any other is read from the log (and a
    /// whole chunk read in order has its root kept).
    private func feed(_ prover: inout StreamingProver, progress: ((UInt64, UInt64) -> Void)?) throws {
        let end = prover.end
        let chunk = TreeRoots.chunk
        var cursor: LogCursor? = nil
        var next: UInt64 = 0  // the leaf the cursor gives next
        do {
            var start: UInt64 = 0
            while start < end {
                let range = start..<min(start + chunk, end)
                let index = Int(start / chunk)
                if takenWhole(range, prover) {
                    prover.add(subtree: roots!.roots[index], covering: range)
                } else {
                    if cursor == nil || next != start {
                        cursor = try reader.events(from: start + 1, through: end)
                        next = start
                    }
                    var hasher = SubtreeHasher()
                    while next < range.upperBound {
                        guard let event = try cursor!.next() else { throw ProofError("the log ends at event \(next), before \(end)") }
                        guard event.sequence == next + 1 else { throw ProofError("the log skips from event \(next) to \(event.sequence)") }
                        let leaf = Self.leaf(of: event)
                        prover.add(leaf, at: next)
                        hasher.add(leaf)
                        next += 1
                    }
                    if range.count == chunk, growsRoots, let roots, index == roots.roots.count { roots.append(hasher.root) }
                }
                start = range.upperBound
                if start & 0xFFFF == 0 { progress?(start, end) }
            }
        } catch let error as LogError {
            throw ProofError("the log at \(reader.directory) cannot be read: \(error.message)")
        }
    }
}
