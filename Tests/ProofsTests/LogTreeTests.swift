import EventLog
import Foundation
import HistoryProofs
import Proofs
import StorageTestSupport
import Testing

/// Proofs made from a real log (docs/PROOFS.md): with the chunks' roots file and without, the
/// same proofs as the tree that holds every leaf, across chunk boundaries and in the hot tail;
/// a roots file damaged, cut short or of another log is made again and changes nothing.
@Suite(.heavy) struct LogTreeTests {
    /// A log of 3 chunks and 1,234 events more (some compacted into blocks, some in the hot tail).
    static func makeLog(_ folder: String) throws -> [TreeHash] {
        var configuration = LogConfiguration()
        configuration.compactsInBackground = false
        let log = try EventLog.open(at: folder + "/log", configuration: configuration)
        for batch in 0..<13 {
            _ = try log.append(contentsOf: (0..<1_000).map { Array("event \(batch)-\($0)".utf8) })
            if batch == 8 { _ = try log.compact() }
        }
        try log.close()
        let cursor = try LogReader(directory: folder + "/log").events(from: 1)
        var leaves: [TreeHash] = []
        while let event = try cursor.next() { leaves.append(LogTree.leaf(of: event)) }
        return leaves
    }

    @Test func proofsWithTheRootsFileAreTheTreesOwn() throws {
        let folder = TemporaryFolder.uniquePath("log-tree")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let leaves = try Self.makeLog(folder)
        #expect(leaves.count == 13_000)
        let tree = MerkleTree(leaves: leaves)
        let rootsFile = folder + "/proofs/log.roots"
        func logTree(_ roots: String?) throws -> LogTree { try LogTree(reader: try LogReader(directory: folder + "/log"), rootsFile: roots) }

        // The first proof makes the roots file as it reads; the later ones read it.
        let cases: [(sequence: UInt64, size: UInt64)] = [
            (13_000, 13_000), (1, 13_000), (4_096, 13_000), (4_097, 12_289), (9_000, 12_288), (12_300, 12_999), (2, 8_192), (8_192, 8_193),
        ]
        for (sequence, size) in cases {
            let proof = try logTree(rootsFile).inclusion(of: sequence, size: size)
            let expected = tree.inclusionProof(index: sequence - 1, size: size)
            #expect(proof.path == expected.path && proof.root == tree.root(size: size), "event \(sequence) of \(size)")
            #expect(proof.verify())
            #expect(proof == (try logTree(nil).inclusion(of: sequence, size: size)))
        }
        for (old, new) in [(1, 13_000), (4_096, 13_000), (4_097, 8_192), (12_288, 12_289), (5_000, 12_000), (13_000, 13_000)] as [(UInt64, UInt64)] {
            let proof = try logTree(rootsFile).consistency(from: old, to: new)
            #expect(proof.path == tree.consistencyProof(from: old, to: new).path, "\(old) → \(new)")
            #expect(proof.verify())
        }
        #expect(try logTree(rootsFile).root() == tree.root)
        #expect(try logTree(rootsFile).root(size: 0) == TreeHash.empty)
        let bytes = try #require(FileManager.default.contents(atPath: rootsFile))
        #expect(bytes.count == 25 + 3 * 36, "the three whole chunks")

        // The proofs read the file: a root changed in it with its CRC made to match (what the
        // CRCs do not catch: docs/PROOFS.md) changes the proof of an event outside that chunk.
        var forged = Array(bytes)
        let record = 25 + 36
        forged[record] ^= 1
        var crc = CRC32C()
        crc.update(withUnsafeBytes(of: UInt64(1).littleEndian) { Array($0) } + Array(forged[record..<record + 32]))
        withUnsafeBytes(of: crc.value.littleEndian) { forged.replaceSubrange(record + 32..<record + 36, with: $0) }
        let logID = try #require(try LogReader(directory: folder + "/log").identity()).logID
        let clean = try TreeRoots(path: rootsFile, logID: logID).check(against: try LogReader(directory: folder + "/log"))
        #expect(clean.checked == 3 && clean.wrong.isEmpty && clean.pastTheLog == 0)
        try Data(forged).write(to: URL(fileURLWithPath: rootsFile))
        #expect(try logTree(rootsFile).inclusion(of: 5, size: 13_000).root != tree.root)
        // vt verify's check finds that chunk.
        let check = try TreeRoots(path: rootsFile, logID: logID).check(against: try LogReader(directory: folder + "/log"))
        #expect(check.checked == 3 && check.wrong == [1])

        // Damaged, cut short, or another log's: made again, the proofs unchanged.
        var damaged = bytes
        damaged[25 + 36 + 5] ^= 1
        let otherLog = bytes.prefix(5) + Data(repeating: 7, count: 16) + bytes.dropFirst(21)
        for broken in [damaged, bytes.prefix(25 + 36 + 10), otherLog, Data("junk".utf8)] {
            try broken.write(to: URL(fileURLWithPath: rootsFile))
            let proof = try logTree(rootsFile).inclusion(of: 5, size: 13_000)
            #expect(proof.path == tree.inclusionProof(index: 4, size: 13_000).path && proof.root == tree.root)
            #expect(FileManager.default.contents(atPath: rootsFile) == bytes, "made again as it was")
        }
    }

    @Test func aTreeThatDoesNotGrowTheRootsFileOnlyReadsIt() throws {
        let folder = TemporaryFolder.uniquePath("log-tree-read-only")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let leaves = try Self.makeLog(folder)
        let rootsFile = folder + "/proofs/log.roots"
        let reader = try LogReader(directory: folder + "/log")
        // An offered log is rooted from the kept roots, and never writes its own (StoreSync).
        let offered = try LogTree(reader: reader, rootsFile: rootsFile, growsRoots: false)
        #expect(try offered.roots(of: [0, 5_000, 13_000]) == [0: .empty, 5_000: MerkleTree(leaves: leaves).root(size: 5_000), 13_000: MerkleTree(leaves: leaves).root])
        #expect(!FileManager.default.fileExists(atPath: rootsFile))
        _ = try LogTree(reader: reader, rootsFile: rootsFile).root()
        #expect(FileManager.default.contents(atPath: rootsFile)?.count == 25 + 3 * 36)
    }

    @Test func wrongNumbersAreRefused() throws {
        let folder = TemporaryFolder.uniquePath("log-tree-bad")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Self.makeLog(folder)
        let tree = try LogTree(reader: try LogReader(directory: folder + "/log"))
        #expect(throws: ProofError.self) { try tree.inclusion(of: 0) }
        #expect(throws: ProofError.self) { try tree.inclusion(of: 13_001) }
        #expect(throws: ProofError.self) { try tree.inclusion(of: 5, size: 13_001) }
        #expect(throws: ProofError.self) { try tree.consistency(from: 6, to: 5) }
        #expect(throws: ProofError.self) { try tree.consistency(from: 0) }
    }
}
