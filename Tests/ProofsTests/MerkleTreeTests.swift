import Crypto
import Proofs
import SeededRandom
import StorageTestSupport
import Testing

/// RFC 6962's tree and proofs (docs/PROOFS.md): the roots Certificate Transparency's tests use,
/// the tree hash against the recursive definition written from the page, and every inclusion and
/// consistency proof of small trees verified, while a flipped byte, a wrong index, size or root,
/// and a hash too many or too few are refused.
@Suite(.heavy) struct MerkleTreeTests {
    /// RFC 6962's leaf hash of an entry: SHA-256(0x00 ‖ entry).
    static func leaf(_ entry: [UInt8]) -> TreeHash {
        TreeHash(Array(SHA256.hash(data: [0x00] + entry)))!
    }

    /// Leaves that all differ, from a seed.
    static func leaves(_ count: Int, seed: UInt64 = 1) -> [TreeHash] {
        var random = SplitMix(seed: seed)
        return (0..<count).map { _ in leaf((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }) }
    }

    /// MTH as docs/PROOFS.md writes it, recursively.
    static func reference(_ leaves: ArraySlice<TreeHash>) -> TreeHash {
        switch leaves.count {
        case 0: return TreeHash(Array(SHA256.hash(data: [UInt8]())))!
        case 1: return leaves.first!
        default:
            var k = 1
            while k * 2 < leaves.count { k *= 2 }
            let start = leaves.startIndex
            return TreeHash(Array(SHA256.hash(data: [0x01] + reference(leaves[start..<start + k]).bytes + reference(leaves[(start + k)...]).bytes)))!
        }
    }

    @Test func theRootsOfCertificateTransparencysTestInputs() throws {
        let inputs: [[UInt8]] = [
            [], [0x00], [0x10], [0x20, 0x21], [0x30, 0x31], [0x40, 0x41, 0x42, 0x43], Array(0x50...0x57), Array(0x60...0x6f),
        ]
        let roots = [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
            "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
        ]
        let tree = MerkleTree(leaves: inputs.map(Self.leaf))
        for (index, root) in roots.enumerated() {
            #expect(tree.root(size: UInt64(index + 1)) == TreeHash(hex: root), "size \(index + 1)")
        }
        #expect(tree.root(size: 0).description == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "the empty tree")
    }

    @Test func theRootIsTheRecursiveDefinitionsForEverySizeUpTo130() {
        let leaves = Self.leaves(130)
        let tree = MerkleTree(leaves: leaves)
        for size in 0...130 {
            #expect(tree.root(size: UInt64(size)) == Self.reference(leaves[..<size]), "size \(size)")
        }
    }

    @Test func everyInclusionProofOfTreesUpTo40LeavesVerifiesAndNothingElseDoes() {
        let leaves = Self.leaves(40, seed: 2)
        let tree = MerkleTree(leaves: leaves)
        for size in 1...UInt64(40) {
            let root = tree.root(size: size)
            for index in 0..<size {
                let proof = tree.inclusionProof(index: index, size: size)
                #expect(proof.verify(leaf: leaves[Int(index)], root: root), "leaf \(index) of \(size)")
                #expect(proof.path.count <= 6, "at most ⌈log₂ 40⌉ hashes")
                #expect(!proof.verify(leaf: leaves[Int((index + 1) % size)], root: root) || size == 1, "another leaf, \(index) of \(size)")
                #expect(!proof.verify(leaf: leaves[Int(index)], root: tree.root(size: size - 1)) || size == 1, "another root")
                var moved = proof
                moved.index = (index + 1) % size
                #expect(!moved.verify(leaf: leaves[Int(index)], root: root) || size == 1, "another index, \(index) of \(size)")
                // A root stands for one size (a signed head names both): the path of one size
                // does not lead to the root of the next.
                if size < 40 {
                    var grown = proof
                    grown.size = size + 1
                    #expect(!grown.verify(leaf: leaves[Int(index)], root: tree.root(size: size + 1)), "another size, \(index) of \(size)")
                }
                if !proof.path.isEmpty {
                    var short = proof
                    short.path.removeLast()
                    #expect(!short.verify(leaf: leaves[Int(index)], root: root), "a hash too few, \(index) of \(size)")
                }
                var long = proof
                long.path.append(leaves[0])
                #expect(!long.verify(leaf: leaves[Int(index)], root: root), "a hash too many, \(index) of \(size)")
            }
        }
    }

    @Test func aFlippedByteAnywhereInAProofIsRefused() {
        let leaves = Self.leaves(37, seed: 3)
        let tree = MerkleTree(leaves: leaves)
        let inclusion = tree.inclusionProof(index: 21)
        let consistency = tree.consistencyProof(from: 13)
        for (which, position) in [(0, 0), (2, 31), (4, 7)] {
            var bytes = inclusion.path[which].bytes
            bytes[position] ^= 0x01
            var flipped = inclusion
            flipped.path[which] = TreeHash(bytes)!
            #expect(!flipped.verify(leaf: leaves[21], root: tree.root), "inclusion, hash \(which), byte \(position)")
            var other = consistency
            var otherBytes = consistency.path[which % consistency.path.count].bytes
            otherBytes[position] ^= 0x80
            other.path[which % consistency.path.count] = TreeHash(otherBytes)!
            #expect(!other.verify(oldRoot: tree.root(size: 13), newRoot: tree.root), "consistency, hash \(which), byte \(position)")
        }
    }

    @Test func everyConsistencyProofOfTreesUpTo40LeavesVerifiesAndNothingElseDoes() {
        let leaves = Self.leaves(40, seed: 4)
        let tree = MerkleTree(leaves: leaves)
        for newSize in 1...UInt64(40) {
            let newRoot = tree.root(size: newSize)
            for oldSize in 1...newSize {
                let oldRoot = tree.root(size: oldSize)
                let proof = tree.consistencyProof(from: oldSize, to: newSize)
                #expect(proof.verify(oldRoot: oldRoot, newRoot: newRoot), "\(oldSize) → \(newSize)")
                #expect(proof.path.count <= 2 * 6)
                guard oldSize < newSize else {
                    #expect(proof.path.isEmpty)
                    continue
                }
                #expect(!proof.verify(oldRoot: newRoot, newRoot: oldRoot), "roots swapped, \(oldSize) → \(newSize)")
                #expect(!proof.verify(oldRoot: tree.root(size: oldSize - 1 == 0 ? newSize : oldSize - 1), newRoot: newRoot), "another old root")
                var other = proof
                other.oldSize = oldSize + 1
                #expect(!other.verify(oldRoot: tree.root(size: oldSize + 1), newRoot: newRoot), "another size, \(oldSize) → \(newSize)")
                var short = proof
                short.path.removeLast()
                #expect(!short.verify(oldRoot: oldRoot, newRoot: newRoot), "a hash too few, \(oldSize) → \(newSize)")
                var long = proof
                long.path.append(leaves[0])
                #expect(!long.verify(oldRoot: oldRoot, newRoot: newRoot), "a hash too many, \(oldSize) → \(newSize)")
            }
        }
        // A tree whose history was rewritten is not consistent with the one seen before.
        var rewritten = leaves
        rewritten[5] = Self.leaf([0xEE])
        let forged = MerkleTree(leaves: rewritten)
        #expect(!forged.consistencyProof(from: 8, to: 40).verify(oldRoot: tree.root(size: 8), newRoot: forged.root))
        #expect(!tree.consistencyProof(from: 8, to: 40).verify(oldRoot: tree.root(size: 8), newRoot: forged.root))
    }

    @Test func hashesReadBackFromTheirHexFormAndRefuseAnythingElse() {
        let hash = Self.leaves(1)[0]
        #expect(TreeHash(hex: hash.description) == hash && TreeHash(hex: hash.description.uppercased()) == hash)
        #expect(TreeHash(hex: String(hash.description.dropLast())) == nil && TreeHash(hex: "g" + hash.description.dropFirst()) == nil)
        #expect(TreeHash([UInt8](repeating: 0, count: 31)) == nil)
    }
}
