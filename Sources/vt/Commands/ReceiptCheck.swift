import ArgumentParser
import Foundation
import HistoryProofs

/// `vt check-proof RECEIPT`: an erasure receipt's signature, heads and proofs (docs/PROOFS.md,
/// "Erasure receipts").
enum ReceiptCheck {
    /// A receipt holds many proofs: at 10 M events about 1.8 KB for each erased event.
    static let largest = 256 << 20

    /// What the receipt claims and what of it does not hold.
    static func verdict(_ bytes: [UInt8], place: String, publicKey: String?) throws -> ProofVerdict {
        let receipt: ErasureReceipt
        do { receipt = try ErasureReceipt.decode(bytes, place: place) } catch let error as ProofError {
            throw RuntimeError(message: error.message)
        }
        var verdict = ProofVerdict(kind: "erasure_receipt", lines: describe(receipt))
        verdict.problems = receipt.problems()
        if let publicKey, publicKey.lowercased() != hexadecimal(receipt.publicKey) {
            verdict.problems.append("it was signed with another key than the one you gave")
        }
        verdict.note =
            "holds: the history before the forget is unchanged after it, and every erased event is in it"
            + (publicKey == nil ? " (compare the public key with the device's, or pass it with --public-key)" : ", signed by the key you gave")
        verdict.pin = receipt.pin
        verdict.map = hexadecimal(receipt.map)
        verdict.publicKey = hexadecimal(receipt.publicKey)
        verdict.before = ProofVerdict.Head(log: hexadecimal(receipt.before.logID), size: receipt.before.treeSize, root: receipt.before.root.description)
        verdict.after = ProofVerdict.Head(log: hexadecimal(receipt.after.logID), size: receipt.after.treeSize, root: receipt.after.root.description)
        var erased: [String: Int] = [:]
        for proof in receipt.erased { erased[hexadecimal(proof.logID), default: 0] += 1 }
        verdict.erased = erased
        verdict.removedPhotos = receipt.removed.photos
        return verdict
    }

    static func describe(_ receipt: ErasureReceipt) -> [String] {
        let removed = receipt.removed
        var logs: [[UInt8]: Int] = [:]
        for proof in receipt.erased { logs[proof.logID, default: 0] += 1 }
        let own = logs.removeValue(forKey: receipt.before.logID) ?? 0
        return [
            "erasure receipt of pin \(receipt.pin) on map \(hexadecimal(receipt.map)), signed with the public key \(hexadecimal(receipt.publicKey))",
            "before the forget: \(receipt.before.treeSize) events of log \(hexadecimal(receipt.before.logID)), root \(receipt.before.root)",
            "after the forget:  \(receipt.after.treeSize) events, root \(receipt.after.root)",
            "erased: \(own) event(s) of this device's log" + logs.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { ", \(logs[$0]!) of device \(hexadecimal($0))'s" }.joined(),
            "removed: \(removed.photos) photo(s), \(removed.snapshotsRewritten) snapshot(s) rewritten, \(removed.snapshotsRemoved) removed,"
                + " \(removed.quarantinedFiles) quarantined file(s)" + (removed.formerLog ? ", log.format1/" : ""),
        ]
    }
}
