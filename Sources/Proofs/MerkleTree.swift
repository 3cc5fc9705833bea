/// RFC 6962's Merkle tree over a list of leaves (docs/PROOFS.md, "The tree"): its root, and the
/// two proofs, made from the leaves themselves. A store keeps subtree roots beside its blocks so
/// that it need not hash every leaf for a proof; these are the definitions that they must agree
/// with, and what the tests check them against.
///
/// ```swift
/// let tree = MerkleTree(leaves: leaves)              // leaf(i) of events 1 … n
/// let proof = tree.inclusionProof(index: 41)          // event 42
/// proof.verify(leaf: leaves[41], root: tree.root)     // true
/// ```
///
/// Cost: O(n) hashes for the root, O(n) for a proof (each sibling subtree is hashed whole).
public struct MerkleTree: Sendable {
    public let leaves: [TreeHash]

    public init(leaves: [TreeHash]) {
        self.leaves = leaves
    }

    public var size: UInt64 { UInt64(leaves.count) }

    /// MTH of all the leaves.
    public var root: TreeHash { Self.root(leaves[...]) }

    /// MTH of the first `size` leaves.
    public func root(size: UInt64) -> TreeHash {
        precondition(size <= self.size, "the tree has \(self.size) leaves")
        return Self.root(leaves[..<Int(size)])
    }

    /// MTH of a run of leaves, bottom up: the roots of the perfect subtrees so far on a stack,
    /// merged as each completes, then folded from the right.
    static func root(_ leaves: ArraySlice<TreeHash>) -> TreeHash {
        guard !leaves.isEmpty else { return .empty }
        var stack: [(hash: TreeHash, size: Int)] = []
        for leaf in leaves {
            stack.append((leaf, 1))
            while stack.count >= 2, stack[stack.count - 1].size == stack[stack.count - 2].size {
                let right = stack.removeLast()
                let left = stack.removeLast()
                stack.append((TreeHash.node(left.hash, right.hash), left.size * 2))
            }
        }
        var hash = stack.removeLast().hash
        while let left = stack.popLast() { hash = TreeHash.node(left.hash, hash) }
        return hash
    }

    /// The largest power of 2 below `n` (n > 1): where RFC 6962 splits a tree of n leaves.
    static func split(_ n: Int) -> Int {
        precondition(n > 1)
        var k = 1
        while k << 1 < n { k <<= 1 }
        return k
    }

    /// The audit path of leaf `index` in the tree of the first `size` leaves (all by default).
    public func inclusionProof(index: UInt64, size: UInt64? = nil) -> InclusionProof {
        let size = size ?? self.size
        precondition(index < size && size <= self.size, "leaf \(index) is not in a tree of \(size)")
        return InclusionProof(index: index, size: size, path: Self.path(Int(index), leaves[..<Int(size)]))
    }

    /// PATH(m, D[0:n]).
    private static func path(_ m: Int, _ leaves: ArraySlice<TreeHash>) -> [TreeHash] {
        guard leaves.count > 1 else { return [] }
        let k = split(leaves.count)
        let start = leaves.startIndex
        if m < k { return path(m, leaves[start..<start + k]) + [root(leaves[(start + k)...])] }
        return path(m - k, leaves[(start + k)...]) + [root(leaves[start..<start + k])]
    }

    /// The proof that the tree of `newSize` leaves (all by default) extends the tree of `oldSize`.
    public func consistencyProof(from oldSize: UInt64, to newSize: UInt64? = nil) -> ConsistencyProof {
        let newSize = newSize ?? size
        precondition(0 < oldSize && oldSize <= newSize && newSize <= size, "sizes \(oldSize) and \(newSize) of a tree of \(size)")
        return ConsistencyProof(
            oldSize: oldSize, newSize: newSize, path: Self.subproof(Int(oldSize), leaves[..<Int(newSize)], complete: true))
    }

    /// SUBPROOF(m, D[0:n], b).
    private static func subproof(_ m: Int, _ leaves: ArraySlice<TreeHash>, complete: Bool) -> [TreeHash] {
        let start = leaves.startIndex
        if m == leaves.count { return complete ? [] : [root(leaves)] }
        let k = split(leaves.count)
        if m <= k { return subproof(m, leaves[start..<start + k], complete: complete) + [root(leaves[(start + k)...])] }
        return subproof(m - k, leaves[(start + k)...], complete: false) + [root(leaves[start..<start + k])]
    }
}
