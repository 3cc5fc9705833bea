import Foundation
import HistoryProofs
import Proofs
import StorageTestSupport
import Testing

/// The proof and signed-head files (docs/PROOFS.md, "The proofs' bytes", "Signed heads"): each
/// form reads back as written, and what is not a proof is refused with the reason.
@Suite struct ProofFileTests {
    let leaves = MerkleTreeTests.leaves(21, seed: 9)
    let log = Array(0..<16).map { UInt8($0 * 7) }

    private func proofs() -> [ProofFile] {
        let tree = MerkleTree(leaves: leaves)
        return [
            ProofFile(
                logID: log, claim: .inclusion(sequence: 6, leaf: leaves[5], proof: tree.inclusionProof(index: 5, size: 21)), root: tree.root),
            ProofFile(
                logID: log, claim: .consistency(oldRoot: tree.root(size: 8), proof: tree.consistencyProof(from: 8, to: 21)), root: tree.root),
            // 1 and 0 are where Foundation's JSON reader on Linux answers `is Bool` for a number.
            ProofFile(
                logID: log, claim: .inclusion(sequence: 1, leaf: leaves[0], proof: tree.inclusionProof(index: 0, size: 1)), root: leaves[0]),
            ProofFile(
                logID: log, claim: .consistency(oldRoot: leaves[0], proof: tree.consistencyProof(from: 1, to: 21)), root: tree.root),
        ]
    }

    @Test func bothFormsReadBackAndHold() throws {
        for proof in proofs() {
            #expect(proof.verify())
            #expect(try ProofFile.decode(proof.binary, place: "binary") == proof)
            #expect(try ProofFile.decode(Array(proof.json.utf8), place: "json") == proof)
        }
    }

    @Test func aProofThatDoesNotLeadToItsRootDoesNotHold() {
        for proof in proofs() {
            var other = proof
            other.root = leaves[1]
            #expect(!other.verify())
        }
    }

    @Test func whatIsNotAProofIsRefusedWithTheReason() throws {
        let binary = proofs()[0].binary
        func refusal(_ bytes: [UInt8]) -> String {
            do {
                _ = try ProofFile.decode(bytes, place: "the file")
                return "read"
            } catch { return "\(error)" }
        }
        #expect(refusal(Array(binary.dropLast())).contains("CRC32C"))
        #expect(refusal(Array(binary.prefix(50))).contains("cut short"))
        var kind = binary
        kind[4] = 9
        #expect(refusal(kind).contains("CRC32C"), "the CRC is checked before anything else")
        #expect(refusal(Array("hello".utf8)).contains("neither VTPF"))
        let json = proofs()[0].json
        #expect(refusal(Array(json.replacingOccurrences(of: "\"sequence\": 6", with: "\"sequence\": 6.5").utf8)).contains("whole number"))
        #expect(refusal(Array(json.replacingOccurrences(of: "\"sequence\": 6", with: "\"sequence\": true").utf8)).contains("whole number"))
        #expect(refusal(Array(json.replacingOccurrences(of: "\"sequence\": 6", with: "\"sequence\": 99").utf8)).contains("not in a tree"))
        #expect(refusal(Array(json.replacingOccurrences(of: "\"kind\": \"inclusion\"", with: "\"kind\": \"x\"").utf8)).contains("\"kind\""))
    }

    @Test func aSignedHeadReadsBackAndItsSignatureHoldsOnlyUnchanged() throws {
        let folder = TemporaryFolder.uniquePath("signed-head")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var made = 0
        let key = try SigningKey.loadOrCreate(store: folder) { _ in made += 1 }
        #expect(try SigningKey.loadOrCreate(store: folder) { _ in made += 1 }.publicKey == key.publicKey && made == 1)
        let tree = MerkleTree(leaves: leaves)
        let head = try SignedHead.sign(map: log.reversed(), logID: log, size: 21, root: tree.root, time: 1_795_251_600_000_000, key: key)
        #expect(head.verify())
        #expect(try SignedHead.decode(head.binary, place: "binary") == head)
        #expect(try SignedHead.decode(Array(head.json.utf8), place: "json") == head)
        for size: UInt64 in [0, 1] {
            let small = try SignedHead.sign(map: log, logID: log, size: size, root: size == 0 ? .empty : leaves[0], time: 1, key: key)
            #expect(try SignedHead.decode(Array(small.json.utf8), place: "json \(size)") == small)
        }
        for change in 0..<4 {
            var other = head
            switch change {
            case 0: other.treeSize = 20
            case 1: other.root = tree.root(size: 20)
            case 2: other.time += 1
            default: other.logID[0] ^= 1
            }
            #expect(!other.verify(), "change \(change)")
        }
        // A damaged key file is refused, not replaced.
        let path = folder + "/" + SigningKey.fileName
        var bytes = try #require(FileManager.default.contents(atPath: path))
        bytes[10] ^= 1
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: ProofError.self) { try SigningKey.loadOrCreate(store: folder) }
    }
}
