import ArgumentParser
import Foundation
import HistoryProofs

/// What `vt check-proof` found in a proof, a signed head or an erasure receipt: what it claims,
/// what of it does not hold, and the same as one JSON object with `--json` (docs/CLI.md). Exit 3
/// when anything does not hold.
struct ProofVerdict: Encodable {
    /// A head as a receipt names it.
    struct Head: Encodable {
        var log: String
        var size: UInt64
        var root: String
    }

    /// `inclusion`, `consistency`, `signed_head` or `erasure_receipt`, as the files name them.
    var kind: String
    var holds: Bool { problems.isEmpty }
    /// What does not hold, each a sentence.
    var problems: [String] = []
    /// When it holds: what it was compared with, or what to compare it with.
    var note: String?
    var log: String?
    var map: String?
    var size: UInt64?
    var root: String?
    var sequence: UInt64?
    var leaf: String?
    var oldSize: UInt64?
    var oldRoot: String?
    var publicKey: String?
    var signedAt: String?
    var pin: String?
    var before: Head?
    var after: Head?
    /// Erased events by the log that held them.
    var erased: [String: Int]?
    var removedPhotos: Int?
    /// The lines a person reads, before the verdict's own.
    var lines: [String] = []

    init(kind: String, lines: [String]) {
        self.kind = kind
        self.lines = lines
    }

    /// Named as `vt prove --json` and `vt head --sign --json` name them.
    enum CodingKeys: String, CodingKey {
        case kind, holds, problems, note, log, map, size, root, sequence, leaf, pin, before, after, erased
        case oldSize = "old_size", oldRoot = "old_root", publicKey = "public_key", signedAt = "signed_at", removedPhotos = "removed_photos"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(holds, forKey: .holds)
        try container.encode(problems, forKey: .problems)
        try container.encodeIfPresent(note, forKey: .note)
        try container.encodeIfPresent(log, forKey: .log)
        try container.encodeIfPresent(map, forKey: .map)
        try container.encodeIfPresent(size, forKey: .size)
        try container.encodeIfPresent(root, forKey: .root)
        try container.encodeIfPresent(sequence, forKey: .sequence)
        try container.encodeIfPresent(leaf, forKey: .leaf)
        try container.encodeIfPresent(oldSize, forKey: .oldSize)
        try container.encodeIfPresent(oldRoot, forKey: .oldRoot)
        try container.encodeIfPresent(publicKey, forKey: .publicKey)
        try container.encodeIfPresent(signedAt, forKey: .signedAt)
        try container.encodeIfPresent(pin, forKey: .pin)
        try container.encodeIfPresent(before, forKey: .before)
        try container.encodeIfPresent(after, forKey: .after)
        try container.encodeIfPresent(erased, forKey: .erased)
        try container.encodeIfPresent(removedPhotos, forKey: .removedPhotos)
    }

    /// Prints it (its lines and "holds" or each "DOES NOT HOLD", or the JSON object), and exits
    /// 3 when something does not hold.
    func show(json: Bool) throws {
        if json {
            try Output.json(self)
        } else {
            let verdict = holds ? note.map { [$0] } ?? ["holds"] : problems.map { "DOES NOT HOLD" + ($0.hasPrefix("for ") ? " " : ": ") + $0 }
            Output.lines(lines + verdict)
        }
        if !holds { throw ExitCode(Exit.problemsFound) }
    }

    static func of(_ signed: SignedHead) -> ProofVerdict {
        let time = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(signed.time) / 1_000_000))
        var verdict = ProofVerdict(kind: "signed_head", lines: [
            "signed head of log \(hex(signed.logID)) (map \(hex(signed.map))): \(signed.treeSize) events", "root: \(signed.root)",
            "signed at \(time) with the public key \(hex(signed.publicKey))",
        ])
        verdict.log = hex(signed.logID)
        verdict.map = hex(signed.map)
        verdict.size = signed.treeSize
        verdict.root = signed.root.description
        verdict.publicKey = hex(signed.publicKey)
        verdict.signedAt = time
        return verdict
    }

    static func of(_ proof: ProofFile) -> ProofVerdict {
        let log = hex(proof.logID)
        var verdict: ProofVerdict
        switch proof.claim {
        case .inclusion(let sequence, let leaf, let inclusion):
            verdict = ProofVerdict(kind: "inclusion", lines: [
                "event \(sequence) of log \(log) is in the history of its first \(inclusion.size) events", "leaf: \(leaf)", "root: \(proof.root)",
            ])
            verdict.sequence = sequence
            verdict.leaf = leaf.description
            verdict.size = inclusion.size
        case .consistency(let oldRoot, let consistency):
            verdict = ProofVerdict(kind: "consistency", lines: [
                "the history of the first \(consistency.newSize) events of log \(log) extends that of the first \(consistency.oldSize)",
                "root at \(consistency.oldSize): \(oldRoot)", "root at \(consistency.newSize): \(proof.root)",
            ])
            verdict.oldSize = consistency.oldSize
            verdict.oldRoot = oldRoot.description
            verdict.size = consistency.newSize
        }
        verdict.log = log
        verdict.root = proof.root.description
        return verdict
    }

    static func hex(_ bytes: [UInt8]) -> String { HistoryProofs.hexadecimal(bytes) }
}
