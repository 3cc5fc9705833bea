/// The runs of leaves whose roots make up a proof's path, in the path's order (docs/PROOFS.md):
/// so that a prover that reads the leaves once, in order, can hash each run as it passes
/// (``StreamingProver``), instead of holding every leaf as ``MerkleTree`` does.
public enum ProofShape {
    /// PATH(m, D[0:n]) as runs: each sibling subtree's leaves.
    public static func inclusion(index m: UInt64, size n: UInt64) -> [Range<UInt64>] {
        precondition(m < n, "leaf \(m) is not in a tree of \(n)")
        return path(m, 0..<n)
    }

    private static func path(_ m: UInt64, _ leaves: Range<UInt64>) -> [Range<UInt64>] {
        guard leaves.count > 1 else { return [] }
        let k = split(UInt64(leaves.count))
        let middle = leaves.lowerBound + k
        if m < k { return path(m, leaves.lowerBound..<middle) + [middle..<leaves.upperBound] }
        return path(m - k, middle..<leaves.upperBound) + [leaves.lowerBound..<middle]
    }

    /// SUBPROOF(m, D[0:n], true) as runs.
    public static func consistency(from m: UInt64, to n: UInt64) -> [Range<UInt64>] {
        precondition(0 < m && m <= n, "sizes \(m) and \(n)")
        return subproof(m, 0..<n, complete: true)
    }

    private static func subproof(_ m: UInt64, _ leaves: Range<UInt64>, complete: Bool) -> [Range<UInt64>] {
        if m == UInt64(leaves.count) { return complete ? [] : [leaves] }
        let k = split(UInt64(leaves.count))
        let middle = leaves.lowerBound + k
        if m <= k { return subproof(m, leaves.lowerBound..<middle, complete: complete) + [middle..<leaves.upperBound] }
        return subproof(m - k, middle..<leaves.upperBound, complete: false) + [leaves.lowerBound..<middle]
    }

    /// The largest power of 2 below n (n > 1).
    static func split(_ n: UInt64) -> UInt64 {
        precondition(n > 1)
        var k: UInt64 = 1
        while k << 1 < n { k <<= 1 }
        return k
    }
}

/// Makes a proof from leaves read once, in order, from the first: each run of
/// ``ProofShape`` hashed as its leaves pass, beside the roots of the trees the proof is about.
///
/// ```swift
/// var prover = StreamingProver(ranges: ProofShape.inclusion(index: 5, size: 9), roots: [9])
/// for (index, leaf) in leaves.enumerated() where prover.wants(UInt64(index)) { prover.add(leaf, at: UInt64(index)) }
/// prover.path; prover.root(of: 9)
/// ```
public struct StreamingProver: Sendable {
    private let ranges: [Range<UInt64>]
    private var hashers: [SubtreeHasher]
    /// The sizes whose roots are wanted, and the hashers of their prefixes.
    private let rootSizes: [UInt64]
    private var prefixes: [SubtreeHasher]
    /// Leaves at these indexes are kept as they pass.
    private let keep: Set<UInt64>
    public private(set) var kept: [UInt64: TreeHash] = [:]
    /// The last leaf any part needs.
    public let end: UInt64

    public init(ranges: [Range<UInt64>], roots: [UInt64], keeping keep: Set<UInt64> = []) {
        self.ranges = ranges
        hashers = ranges.map { _ in SubtreeHasher() }
        rootSizes = roots
        prefixes = roots.map { _ in SubtreeHasher() }
        self.keep = keep
        end = max(ranges.map(\.upperBound).max() ?? 0, roots.max() ?? 0, (keep.max() ?? 0) + 1)
    }

    /// Takes leaf `index`; leaves must come in order, from 0, up to ``end``.
    public mutating func add(_ leaf: TreeHash, at index: UInt64) {
        for position in ranges.indices where ranges[position].contains(index) { hashers[position].add(leaf) }
        for position in rootSizes.indices where index < rootSizes[position] { prefixes[position].add(leaf) }
        if keep.contains(index) { kept[index] = leaf }
    }

    /// Whether the leaves of `chunk` may be given as the root of their subtree
    /// (``add(subtree:covering:)``): every run and prefix lies wholly around it or apart from
    /// it, and no leaf in it is to be kept.
    public func takesWhole(_ chunk: Range<UInt64>) -> Bool {
        func apart(_ run: Range<UInt64>) -> Bool { run.upperBound <= chunk.lowerBound || chunk.upperBound <= run.lowerBound }
        func around(_ run: Range<UInt64>) -> Bool { run.lowerBound <= chunk.lowerBound && chunk.upperBound <= run.upperBound }
        return ranges.allSatisfy { apart($0) || around($0) } && rootSizes.allSatisfy { apart(0..<$0) || around(0..<$0) }
            && !keep.contains(where: chunk.contains)
    }

    /// Takes a chunk's leaves as their subtree's root (``takesWhole(_:)`` must hold).
    public mutating func add(subtree root: TreeHash, covering chunk: Range<UInt64>) {
        let leaves = UInt64(chunk.count)
        for position in ranges.indices where ranges[position].contains(chunk.lowerBound) { hashers[position].add(subtree: root, leaves: leaves) }
        for position in rootSizes.indices where chunk.lowerBound < rootSizes[position] { prefixes[position].add(subtree: root, leaves: leaves) }
    }

    /// The path: each run's root, in order.
    public var path: [TreeHash] { hashers.map(\.root) }

    /// The root of the tree of `size` leaves (one of those asked for at the start).
    public func root(of size: UInt64) -> TreeHash? {
        rootSizes.firstIndex(of: size).map { prefixes[$0].root }
    }
}
