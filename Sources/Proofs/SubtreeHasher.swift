/// The root (MTH, docs/PROOFS.md) of a run of leaves given one at a time, in O(log n) memory:
/// the perfect subtrees seen so far, biggest first. MTH of n leaves, n = 2^a + 2^b + … with
/// a > b > …, is node(P_a, node(P_b, …)) of those subtrees, so the root folds them from the
/// right.
///
/// ```swift
/// var hasher = SubtreeHasher()
/// for leaf in leaves { hasher.add(leaf) }
/// hasher.root        // == MerkleTree(leaves: leaves).root
/// ```
public struct SubtreeHasher: Sendable {
    /// (leaves, root) of each perfect subtree, biggest first; sizes strictly decreasing.
    private var stack: [(count: UInt64, hash: TreeHash)] = []
    public private(set) var count: UInt64 = 0

    public init() {}

    public mutating func add(_ leaf: TreeHash) {
        var carry = (count: UInt64(1), hash: leaf)
        while let last = stack.last, last.count == carry.count {
            stack.removeLast()
            carry = (last.count * 2, TreeHash.node(last.hash, carry.hash))
        }
        stack.append(carry)
        count += 1
    }

    /// MTH of the leaves added (the empty tree's hash when none was).
    public var root: TreeHash {
        guard var hash = stack.last?.hash else { return .empty }
        for subtree in stack.dropLast().reversed() { hash = TreeHash.node(subtree.hash, hash) }
        return hash
    }
}
