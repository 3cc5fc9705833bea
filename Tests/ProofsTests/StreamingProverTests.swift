import Proofs
import StorageTestSupport
import Testing

/// The prover that reads leaves once (``StreamingProver``, ``SubtreeHasher``) against the tree
/// that holds them all (``MerkleTree``, itself checked against the definition): the same roots
/// and the same paths, for every proof of trees of 1 to 70 leaves.
@Suite(.heavy) struct StreamingProverTests {
    @Test func theRootOfEveryPrefixIsTheTreesRoot() {
        let leaves = MerkleTreeTests.leaves(130, seed: 3)
        let tree = MerkleTree(leaves: leaves)
        var hasher = SubtreeHasher()
        #expect(hasher.root == TreeHash.empty)
        for (index, leaf) in leaves.enumerated() {
            hasher.add(leaf)
            #expect(hasher.root == tree.root(size: UInt64(index + 1)), "size \(index + 1)")
        }
    }

    private func prove(_ leaves: [TreeHash], _ prover: inout StreamingProver) {
        for index in 0..<prover.end { prover.add(leaves[Int(index)], at: index) }
    }

    @Test func everyInclusionProofIsTheTreesOwn() {
        let leaves = MerkleTreeTests.leaves(70, seed: 4)
        let tree = MerkleTree(leaves: leaves)
        for size in UInt64(1)...70 {
            for index in 0..<size {
                var prover = StreamingProver(ranges: ProofShape.inclusion(index: index, size: size), roots: [size], keeping: [index])
                #expect(prover.end == size)
                prove(leaves, &prover)
                #expect(prover.path == tree.inclusionProof(index: index, size: size).path, "leaf \(index) of \(size)")
                #expect(prover.root(of: size) == tree.root(size: size))
                #expect(prover.kept[index] == leaves[Int(index)])
            }
        }
    }

    @Test func everyConsistencyProofIsTheTreesOwn() {
        let leaves = MerkleTreeTests.leaves(70, seed: 5)
        let tree = MerkleTree(leaves: leaves)
        for newSize in UInt64(1)...70 {
            for oldSize in 1...newSize {
                var prover = StreamingProver(ranges: ProofShape.consistency(from: oldSize, to: newSize), roots: [oldSize, newSize])
                prove(leaves, &prover)
                #expect(prover.path == tree.consistencyProof(from: oldSize, to: newSize).path, "\(oldSize) → \(newSize)")
                #expect(prover.root(of: oldSize) == tree.root(size: oldSize))
                #expect(prover.root(of: newSize) == tree.root(size: newSize))
            }
        }
    }
}
