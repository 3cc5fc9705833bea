import Foundation
import SeededRandom
import StorageTestSupport
import Testing

/// Proofs across `vt upgrade` (docs/PROOFS.md: "compaction, upgrade and erasure never change a
/// leaf"). A format-1 store offers no proofs (its chain links batches) until it is upgraded;
/// then, and again once the upgraded log has grown and been compacted, every event's inclusion
/// proof and proofs between seeded pairs of sizes hold by the verifier `ProofCommandTests`
/// writes from PROOFS.md alone, against the leaves read from the format-1 log, and the proofs
/// given right after the upgrade come out again byte for byte.
@Suite(.heavy) struct ProofUpgradeTests {
    let vt = CLI()
    typealias Steps = ProofCommandTests

    @Test func everyProofOfAnUpgradedStoreHoldsForTheFormat1History() async throws {
        let seeded = try await SeededStore.make(label: "proofs-upgrade", format: .v1)
        defer { seeded.remove() }
        let store = seeded.folder
        let work = TemporaryFolder.uniquePath("proofs-upgrade-files")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let leaves = try Steps.leaves(ofLogIn: store)
        #expect(leaves.count == 12)

        // Format 1's chain links batches, not events: no tree is offered until the upgrade.
        let refused = try vt("head", "--store", store)
        #expect(refused.status != 0 && refused.errors.contains("`vt upgrade` converts it"), "\(refused.errors)")

        #expect(try vt("upgrade", "--store", store).status == 0)
        #expect(try Steps.leaves(ofLogIn: store) == leaves, "the upgrade keeps every leaf")
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix(seed: seed)
        let given = try checkEveryProof(store, leaves: leaves, given: [], work: work, seed: seed, random: &random, when: "after the upgrade")
        // The upgraded log grows and is compacted: the history before is a prefix, unchanged.
        #expect(try vt("pin", "drop", "10", "20", "--store", store).status == 0)
        #expect(try vt("region", "set", "10", "20", "5", "5", "--store", store).status == 0)
        #expect(try vt("compact", "--store", store).status == 0)
        let grown = try Steps.leaves(ofLogIn: store)
        #expect(grown.count == 14 && Array(grown.prefix(12)) == leaves)
        _ = try checkEveryProof(store, leaves: grown, given: given, work: work, seed: seed, random: &random, when: "after growing and a compaction")
    }

    /// The root at every size; each event's proof in the whole tree and each size's proof
    /// that the whole tree extends it, checked step by step; seeded pairs of sizes besides;
    /// and the proofs `given` earlier, made again, the same bytes. Returns the proofs it made.
    private func checkEveryProof(
        _ store: String, leaves: [[UInt8]], given: [(arguments: [String], bytes: [UInt8])], work: String, seed: UInt64,
        random: inout SplitMix, when: String
    ) throws -> [(arguments: [String], bytes: [UInt8])] {
        var made: [(arguments: [String], bytes: [UInt8])] = []
        let count = leaves.count
        for size in 1...count {
            let root = try CLI.object(try vt("head", "--size", "\(size)", "--json", "--store", store).output)["root"] as? String
            #expect(root == Steps.hex(Steps.mth(leaves.prefix(size))), "\(when): the root of \(size)")
        }
        var cases = (1...count).flatMap { [(inclusion: true, first: $0, size: count), (inclusion: false, first: $0, size: count)] }
        for _ in 0..<8 {
            let size = Int.random(in: 1...count, using: &random)
            cases.append((Bool.random(using: &random), Int.random(in: 1...size, using: &random), size))
        }
        for (inclusion, first, size) in cases {
            let path = "\(work)/\(inclusion ? "inclusion" : "consistency")-\(first)-\(size).bin"
            try? FileManager.default.removeItem(atPath: path)
            let arguments = (inclusion ? ["\(first)"] : ["--consistency", "\(first)"]) + ["--size", "\(size)", "--out", path]
            let run = try vt.run(["prove"] + arguments + ["--store", store])
            #expect(run.status == 0, "\(when), seed \(seed), \(arguments): \(run.errors)")
            let bytes = try #require(FileManager.default.contents(atPath: path).map(Array.init))
            made.append((Array(arguments.dropLast(2)), bytes))
            let proof = try #require(Steps.parse(bytes), "\(when): \(arguments)")
            let root = Steps.mth(leaves.prefix(size))
            #expect(proof.root == root && proof.size == UInt64(size), "\(when), seed \(seed): \(arguments)")
            if inclusion {
                #expect(proof.start == leaves[first - 1], "\(when): the leaf of \(first)")
                #expect(
                    Steps.inclusionHolds(index: UInt64(first - 1), size: UInt64(size), leaf: proof.start, path: proof.path, root: root),
                    "\(when), seed \(seed): event \(first) in \(size)")
            } else {
                let old = Steps.mth(leaves.prefix(first))
                #expect(proof.start == old, "\(when): the root of \(first)")
                #expect(
                    Steps.consistencyHolds(m: UInt64(first), n: UInt64(size), first: old, second: root, path: proof.path),
                    "\(when), seed \(seed): \(size) extends \(first)")
            }
            #expect(try vt("check-proof", path, "--root", Steps.hex(root)).status == 0, "\(when): \(arguments)")
        }
        for (index, proof) in given.enumerated() {
            let path = "\(work)/again-\(index).bin"
            try? FileManager.default.removeItem(atPath: path)
            #expect(try vt.run(["prove"] + proof.arguments + ["--out", path, "--store", store]).status == 0)
            #expect(FileManager.default.contents(atPath: path).map(Array.init) == proof.bytes, "\(when), seed \(seed): \(proof.arguments)")
        }
        return made
    }
}
