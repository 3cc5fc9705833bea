/// That the tree of `newSize` leaves extends the tree of `oldSize` (0 < oldSize ≤ newSize):
/// RFC 6962's consistency proof (docs/PROOFS.md, "Consistency proof").
public struct ConsistencyProof: Hashable, Sendable {
    public var oldSize: UInt64
    public var newSize: UInt64
    public var path: [TreeHash]

    public init(oldSize: UInt64, newSize: UInt64, path: [TreeHash]) {
        self.oldSize = oldSize
        self.newSize = newSize
        self.path = path
    }

    /// Whether the path shows `newRoot`'s tree extending `oldRoot`'s (RFC 9162, 2.1.4.2).
    public func verify(oldRoot: TreeHash, newRoot: TreeHash) -> Bool {
        guard oldSize > 0, oldSize <= newSize else { return false }
        if oldSize == newSize { return path.isEmpty && oldRoot == newRoot }
        guard !path.isEmpty else { return false }
        var hashes = path[...]
        // A first tree that is a perfect subtree is the path's implicit first hash.
        if oldSize & (oldSize - 1) == 0 { hashes = ArraySlice([oldRoot] + path) }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var first = hashes.first!
        var second = first
        for hash in hashes.dropFirst() {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                first = TreeHash.node(hash, first)
                second = TreeHash.node(hash, second)
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                second = TreeHash.node(second, hash)
            }
            fn >>= 1
            sn >>= 1
        }
        return first == oldRoot && second == newRoot && sn == 0
    }
}
