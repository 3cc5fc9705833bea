import EventLog
import Proofs

/// Whether a log another store offers agrees with the signed heads of its device: the one the
/// other store holds, and the one this store checked before (docs/PROOFS.md, "Signed heads at
/// sync"). A device that signed two histories that do not extend each other, a head signed with
/// another key than the device's, a head whose root its log does not have: each is refused,
/// named, before anything of the log is taken.
///
/// ```swift
/// let tree = try LogTree(reader: offeredLog, rootsFile: copyRoots, growsRoots: false)
/// let keep = try SignedHeadCheck.check(tree, map: map, offered: theirs, held: ours, device: "phone")
/// ```
public enum SignedHeadCheck {
    /// Checks `offered` (the other store's newest head of the log, nil when it has none) and
    /// `held` (this store's, nil when it saw none) against `tree`, the offered log. Returns the
    /// head to keep once the log is taken: the larger of the two.
    ///
    /// `tree` may take whole chunks from the roots of this store's copy of the log: where the
    /// copy and the offered log differ, the roots are the copy's, so a head of the offered
    /// history is refused here, and a history rewritten under an old head is refused by the
    /// chain's check that follows (docs/DEVICES.md).
    ///
    /// - Throws: ``ProofError`` naming what does not hold.
    public static func check(
        _ tree: LogTree, map: [UInt8], offered: SignedHead?, held: SignedHead?, device: String
    ) throws -> SignedHead? {
        guard offered != nil || held != nil else { return nil }
        if let offered {
            guard offered.verify() else {
                throw ProofError("the signed head offered for device \(device) (\(offered.treeSize) events) is not signed by the key it names; nothing of its log was taken")
            }
            guard offered.map == map, offered.logID == tree.logID else {
                throw ProofError("the signed head offered for device \(device) is of another map or log; nothing of its log was taken")
            }
            if let held, held.publicKey != offered.publicKey {
                throw ProofError(
                    "device \(device)'s head of \(offered.treeSize) events is signed with the key \(hexadecimal(offered.publicKey)), not with the key \(hexadecimal(held.publicKey)) that signed the heads this store saw; nothing of its log was taken (a device whose key was replaced: remove devices/\(device)/\(SignedHead.fileName) in this store to trust its new key)"
                )
            }
            guard offered.treeSize <= tree.size else {
                throw ProofError(
                    "device \(device)'s log offered holds \(tree.size) events, but its signed head names \(offered.treeSize); nothing of it was taken")
            }
        }
        // A copy elsewhere may lag behind the head this store saw: only the sizes the offered
        // log reaches can be checked.
        let heads = [offered, held].compactMap { $0 }.filter { $0.treeSize <= tree.size }
        let roots = try tree.roots(of: heads.map(\.treeSize))
        for head in heads where roots[head.treeSize] != head.root {
            let whose = head == offered ? "the head it came with" : "the head this store saw before"
            throw ProofError(
                "device \(device)'s log offered is not the history its key signed: \(whose) names the root \(head.root) for its first \(head.treeSize) events, and the log offered has \(roots[head.treeSize]!) there; a rewritten history, not taken"
            )
        }
        return [offered, held].compactMap { $0 }.max { $0.treeSize < $1.treeSize }
    }
}
