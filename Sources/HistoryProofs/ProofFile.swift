import EventLog
import Foundation
import Proofs

/// A proof about one log, as a file (docs/PROOFS.md, "The proofs' bytes"): in the binary form
/// (`VTPF`, fixed fields, the path, a CRC32C) or as JSON. Everything a checker needs is in it:
/// the claim, the hashes it starts from and the root it leads to; the person compares that root
/// with one they trust (a head they saw, or signed).
public struct ProofFile: Equatable, Sendable {
    public enum Claim: Equatable, Sendable {
        /// Event `sequence` (leaf `sequence − 1`), whose leaf is `leaf`, is in the tree of
        /// `proof.size` events.
        case inclusion(sequence: UInt64, leaf: TreeHash, proof: InclusionProof)
        /// The tree of `proof.newSize` events extends the tree of `proof.oldSize`, whose root
        /// is `oldRoot`.
        case consistency(oldRoot: TreeHash, proof: ConsistencyProof)
    }

    static let magic = Array("VTPF".utf8)
    /// The most hashes a path may hold: a tree of 2^64 leaves needs at most 2 × 64 for a
    /// consistency proof, but no log of this store reaches 2^32, and a bound keeps a damaged
    /// count from asking for gigabytes.
    static let maxPath = 64

    /// The log's id (its device's id in a store of several devices).
    public var logID: [UInt8]
    public var claim: Claim
    /// The root of the tree of the proof's size.
    public var root: TreeHash

    public init(logID: [UInt8], claim: Claim, root: TreeHash) {
        self.logID = logID
        self.claim = claim
        self.root = root
    }

    /// The tree's size the proof leads to.
    public var size: UInt64 {
        switch claim {
        case .inclusion(_, _, let proof): proof.size
        case .consistency(_, let proof): proof.newSize
        }
    }

    public var path: [TreeHash] {
        switch claim {
        case .inclusion(_, _, let proof): proof.path
        case .consistency(_, let proof): proof.path
        }
    }

    /// Whether the path leads from the claim's start to ``root`` (docs/PROOFS.md, the by-hand
    /// steps).
    public func verify() -> Bool {
        switch claim {
        case .inclusion(let sequence, let leaf, let proof): sequence == proof.index + 1 && proof.verify(leaf: leaf, root: root)
        case .consistency(let oldRoot, let proof): proof.verify(oldRoot: oldRoot, newRoot: root)
        }
    }

    /// The binary form.
    public var binary: [UInt8] {
        var bytes = Self.magic
        switch claim {
        case .inclusion(let sequence, let leaf, let proof):
            bytes.append(1)
            bytes += logID
            bytes.appendLittleEndian(sequence)
            bytes.appendLittleEndian(proof.size)
            bytes += leaf.bytes
        case .consistency(let oldRoot, let proof):
            bytes.append(2)
            bytes += logID
            bytes.appendLittleEndian(proof.oldSize)
            bytes.appendLittleEndian(proof.newSize)
            bytes += oldRoot.bytes
        }
        bytes += root.bytes
        bytes.append(UInt8(path.count))
        for hash in path { bytes += hash.bytes }
        var crc = CRC32C()
        crc.update(bytes)
        bytes.appendLittleEndian(crc.value)
        return bytes
    }

    /// Reads the binary form or JSON (told apart by the first bytes); `place` names the file
    /// in the errors.
    public static func decode(_ bytes: [UInt8], place: String) throws -> ProofFile {
        if bytes.starts(with: magic) { return try decodeBinary(bytes, place: place) }
        if bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") {
            return try ProofJSON.decode(bytes, place: place)
        }
        throw ProofError("\(place) is not a proof: it starts with neither VTPF nor {")
    }

    private static func decodeBinary(_ bytes: [UInt8], place: String) throws -> ProofFile {
        let fixed = 4 + 1 + 16 + 8 + 8 + 32 + 32 + 1
        guard bytes.count >= fixed + 4 else { throw ProofError("\(place) is cut short: \(bytes.count) bytes, a proof has at least \(fixed + 4)") }
        var crc = CRC32C()
        crc.update(Array(bytes[..<(bytes.count - 4)]))
        guard crc.value == bytes.readLittleEndian(UInt32.self, at: bytes.count - 4) else {
            throw ProofError("\(place) is damaged: its CRC32C does not match its bytes")
        }
        let count = Int(bytes[fixed - 1])
        guard count <= maxPath else { throw ProofError("\(place) names a path of \(count) hashes, more than \(maxPath)") }
        guard bytes.count == fixed + 32 * count + 4 else {
            throw ProofError("\(place) has \(bytes.count) bytes; a proof with a path of \(count) hashes has \(fixed + 32 * count + 4)")
        }
        let kind = bytes[4]
        let logID = Array(bytes[5..<21])
        let first = bytes.readLittleEndian(UInt64.self, at: 21)
        let size = bytes.readLittleEndian(UInt64.self, at: 29)
        let start = TreeHash(Array(bytes[37..<69]))!
        let root = TreeHash(Array(bytes[69..<101]))!
        let path = (0..<count).map { TreeHash(Array(bytes[(fixed + 32 * $0)..<(fixed + 32 * $0 + 32)]))! }
        switch kind {
        case 1:
            guard first >= 1, first <= size else { throw ProofError("\(place) claims event \(first) in a tree of \(size) events") }
            return ProofFile(
                logID: logID, claim: .inclusion(sequence: first, leaf: start, proof: InclusionProof(index: first - 1, size: size, path: path)),
                root: root)
        case 2:
            guard first >= 1, first <= size else { throw ProofError("\(place) claims that \(size) events extend \(first)") }
            return ProofFile(
                logID: logID, claim: .consistency(oldRoot: start, proof: ConsistencyProof(oldSize: first, newSize: size, path: path)), root: root)
        default:
            throw ProofError("\(place) is a proof of kind \(kind); 1 (inclusion) and 2 (consistency) are known")
        }
    }

    /// The JSON form (one object, keys in a fixed order).
    public var json: String { ProofJSON(self).text }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    func readLittleEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(self[offset + index]) << (8 * index) }
        return value
    }
}
