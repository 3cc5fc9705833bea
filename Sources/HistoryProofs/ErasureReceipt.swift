import Crypto
import Foundation
import Proofs

/// What a forget erased, and the proof that it changed nothing else (docs/PROOFS.md, "Erasure
/// receipts"): the device's signed heads before and after, the consistency proof between them
/// (no leaf of the history before changed), an inclusion proof of every erased event in the
/// tree of its log, and what was removed; signed as a whole by the device.
///
/// Two lines of text: the receipt's JSON object, then `{"kind": "receipt_signature", …}`,
/// whose Ed25519 signature covers the first line's bytes exactly (without its newline).
public struct ErasureReceipt: Equatable, Sendable {
    /// What else the forget removed, counted (never named: the photos' digests would say what
    /// the erased events said).
    public struct Removed: Equatable, Sendable {
        public var events: UInt64 = 0
        public var photos = 0
        public var snapshotsRewritten = 0
        public var snapshotsRemoved = 0
        public var quarantinedFiles = 0
        public var formerLog = false
        public init() {}
    }

    public var map: [UInt8]
    /// The forgotten pin's id, as the `PlaceForgotten` event names it (16 hexadecimal digits).
    public var pin: String
    /// The device's heads: before the forget, and after its `PlaceForgotten`.
    public var before: SignedHead
    public var after: SignedHead
    /// That the tree after extends the tree before.
    public var consistency: ProofFile
    /// Each erased event's inclusion proof, in the tree of its log: this device's (the tree
    /// before) and each copy's, by log, then by sequence.
    public var erased: [ProofFile]
    public var removed: Removed
    /// The device's public key and its signature of the receipt's first line.
    public var publicKey: [UInt8] = []
    public var signature: [UInt8] = []

    public init(
        map: [UInt8], pin: String, before: SignedHead, after: SignedHead, consistency: ProofFile, erased: [ProofFile], removed: Removed
    ) {
        self.map = map
        self.pin = pin
        self.before = before
        self.after = after
        self.consistency = consistency
        self.erased = erased
        self.removed = removed
    }

    /// Signs the receipt with the device's key (the key of its heads).
    public mutating func sign(with key: SigningKey) throws {
        publicKey = key.publicKey
        signature = try key.sign(Array(ErasureReceiptJSON.body(self).utf8))
    }

    /// The file's text: the receipt's line, the signature's line.
    public var text: String { ErasureReceiptJSON.body(self) + "\n" + ErasureReceiptJSON.signatureLine(self) + "\n" }

    public static func isReceipt(_ bytes: [UInt8]) -> Bool {
        bytes.count > 40 && String(decoding: bytes.prefix(64), as: UTF8.self).contains("\"erasure_receipt\"")
    }

    public static func decode(_ bytes: [UInt8], place: String) throws -> ErasureReceipt {
        try ErasureReceiptJSON.decode(bytes, place: place)
    }

    /// What does not hold, in the order a person checks it by hand; empty when it all holds.
    public func problems() -> [String] {
        var problems: [String] = []
        let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
        if key?.isValidSignature(signature, for: Array(ErasureReceiptJSON.body(self).utf8)) != true {
            problems.append("the receipt's signature is not its public key's over its first line")
        }
        for (name, head) in [("before", before), ("after", after)] {
            if !head.verify() { problems.append("the head \(name) the forget is not signed by the key it names") }
            if head.publicKey != publicKey { problems.append("the head \(name) the forget is signed with another key than the receipt") }
            if head.map != map { problems.append("the head \(name) the forget is of another map") }
        }
        if before.logID != after.logID { problems.append("the heads before and after are of two logs") }
        if after.treeSize <= before.treeSize { problems.append("the head after the forget is not larger than the head before") }
        if case .consistency(let oldRoot, let proof) = consistency.claim, consistency.logID == before.logID, oldRoot == before.root,
            proof.oldSize == before.treeSize, proof.newSize == after.treeSize, consistency.root == after.root
        {
            if !consistency.verify() { problems.append("the consistency proof does not hold: the history before the forget changed") }
        } else {
            problems.append("the consistency proof is not from the head before to the head after")
        }
        var trees: [[UInt8]: (UInt64, TreeHash)] = [before.logID: (before.treeSize, before.root)]
        for proof in erased {
            guard case .inclusion(let sequence, _, _) = proof.claim else {
                problems.append("an erased event's proof is not an inclusion proof")
                continue
            }
            let tree = trees[proof.logID] ?? (proof.size, proof.root)
            trees[proof.logID] = tree
            if tree != (proof.size, proof.root) {
                problems.append("event \(sequence) of log \(hexadecimal(proof.logID)) is proved in another tree than the log's other erased events")
            } else if !proof.verify() {
                problems.append("the inclusion proof of event \(sequence) of log \(hexadecimal(proof.logID)) does not hold")
            }
        }
        if UInt64(erased.count) != removed.events { problems.append("the receipt proves \(erased.count) erased events and says \(removed.events)") }
        return problems
    }
}
