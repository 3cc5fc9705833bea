/// That leaf `index` is in the tree of `size` leaves: RFC 6962's audit path (docs/PROOFS.md,
/// "Inclusion proof"). Leaf indexes count from 0: event n is leaf n − 1.
public struct InclusionProof: Hashable, Sendable {
    public var index: UInt64
    public var size: UInt64
    public var path: [TreeHash]

    public init(index: UInt64, size: UInt64, path: [TreeHash]) {
        self.index = index
        self.size = size
        self.path = path
    }

    /// Whether the path leads from `leaf` to `root` (RFC 9162, 2.1.3.2).
    public func verify(leaf: TreeHash, root: TreeHash) -> Bool {
        guard index < size else { return false }
        var fn = index
        var sn = size - 1
        var hash = leaf
        for sibling in path {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                hash = TreeHash.node(sibling, hash)
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                hash = TreeHash.node(hash, sibling)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && hash == root
    }
}
