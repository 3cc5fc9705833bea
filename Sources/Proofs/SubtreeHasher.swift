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

    public mutating func add(_ leaf: TreeHash) { add(subtree: leaf, leaves: 1) }

    /// Takes the root of a perfect subtree of `leaves` leaves (a power of 2) as if its leaves
    /// were added one by one: the leaves added so far must be a multiple of `leaves` (the
    /// subtree is aligned, docs/PROOFS.md, "Keeping the tree so that a proof reads no payload").
    public mutating func add(subtree root: TreeHash, leaves: UInt64) {
        precondition(leaves > 0 && leaves & (leaves - 1) == 0 && count % leaves == 0, "a perfect subtree, aligned")
        var carry = (count: leaves, hash: root)
        while let last = stack.last, last.count == carry.count {
            stack.removeLast()
            carry = (last.count * 2, TreeHash.node(last.hash, carry.hash))
        }
        stack.append(carry)
        count += leaves
    }

    /// MTH of the leaves added (the empty tree's hash when none was).
    public var root: TreeHash {
        guard var hash = stack.last?.hash else { return .empty }
        for subtree in stack.dropLast().reversed() { hash = TreeHash.node(subtree.hash, hash) }
        return hash
    }
}
