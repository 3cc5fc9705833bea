import Foundation
import Proofs

/// The JSON form of a proof (docs/PROOFS.md, "The proofs' bytes"):
///
/// ```json
/// {"kind": "inclusion", "log": "<32 hex>", "sequence": 5, "size": 9, "leaf": "<64 hex>", "root": "<64 hex>", "path": ["<64 hex>", …]}
/// {"kind": "consistency", "log": "<32 hex>", "old_size": 4, "size": 9, "old_root": "<64 hex>", "root": "<64 hex>", "path": […]}
/// ```
///
/// Read strictly: an unknown or missing key, a value of the wrong kind, a hash that is not 64
/// hexadecimal digits is refused, naming the key.
struct ProofJSON {
    let text: String

    init(_ proof: ProofFile) {
        func quoted(_ hash: TreeHash) -> String { "\"\(hash.description)\"" }
        var fields = ["\"kind\": \"\(proof.kindName)\"", "\"log\": \"\(hexadecimal(proof.logID))\""]
        switch proof.claim {
        case .inclusion(let sequence, let leaf, let inclusion):
            fields += ["\"sequence\": \(sequence)", "\"size\": \(inclusion.size)", "\"leaf\": \(quoted(leaf))"]
        case .consistency(let oldRoot, let consistency):
            fields += ["\"old_size\": \(consistency.oldSize)", "\"size\": \(consistency.newSize)", "\"old_root\": \(quoted(oldRoot))"]
        }
        fields += ["\"root\": \(quoted(proof.root))", "\"path\": [" + proof.path.map(quoted).joined(separator: ", ") + "]"]
        text = "{" + fields.joined(separator: ", ") + "}"
    }

    static func decode(_ input: [UInt8], place: String) throws -> ProofFile {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(input)) as? [String: Any] else {
                throw ProofError("\(place) is not a JSON object")
            }
            object = parsed
        } catch let error as ProofError {
            throw error
        } catch {
            throw ProofError("\(place) is not valid JSON")
        }
        func refuse(_ why: String) -> ProofError { ProofError("\(place) cannot be read as a proof: \(why)") }
        guard let kind = object["kind"] as? String, ["inclusion", "consistency"].contains(kind) else {
            throw refuse("\"kind\" must be \"inclusion\" or \"consistency\"")
        }
        let keys =
            kind == "inclusion" ? ["kind", "log", "sequence", "size", "leaf", "root", "path"] : ["kind", "log", "old_size", "size", "old_root", "root", "path"]
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first { throw refuse("it holds the unknown key \"\(unknown)\"") }
        if let missing = keys.first(where: { object[$0] == nil }) { throw refuse("it lacks the key \"\(missing)\"") }
        func number(_ key: String) throws -> UInt64 {
            // Whole numbers only: not 1.5, not "1", not true.
            guard let whole = JSONNumber.whole(object[key]), whole >= 1 else { throw refuse("\"\(key)\" must be a whole number of at least 1") }
            return UInt64(whole)
        }
        func hash(_ key: String, _ value: Any?) throws -> TreeHash {
            guard let text = value as? String, let hash = TreeHash(hex: text) else { throw refuse("\"\(key)\" must be 64 hexadecimal digits") }
            return hash
        }
        guard let logText = object["log"] as? String, let logID = bytes(hex: logText), logID.count == 16 else {
            throw refuse("\"log\" must be 32 hexadecimal digits")
        }
        guard let pathValues = object["path"] as? [Any], pathValues.count <= ProofFile.maxPath else {
            throw refuse("\"path\" must be a list of at most \(ProofFile.maxPath) hashes")
        }
        let path = try pathValues.map { try hash("path", $0) }
        let size = try number("size"), root = try hash("root", object["root"])
        if kind == "inclusion" {
            let sequence = try number("sequence")
            guard sequence <= size else { throw refuse("event \(sequence) is not in a tree of \(size) events") }
            return ProofFile(
                logID: logID,
                claim: .inclusion(
                    sequence: sequence, leaf: try hash("leaf", object["leaf"]), proof: InclusionProof(index: sequence - 1, size: size, path: path)),
                root: root)
        }
        let oldSize = try number("old_size")
        guard oldSize <= size else { throw refuse("a tree of \(size) events cannot extend one of \(oldSize)") }
        return ProofFile(
            logID: logID,
            claim: .consistency(oldRoot: try hash("old_root", object["old_root"]), proof: ConsistencyProof(oldSize: oldSize, newSize: size, path: path)),
            root: root)
    }

    private static func bytes(hex: String) -> [UInt8]? { SignedHeadJSON.decodeHex(hex) }
}

extension ProofFile {
    var kindName: String {
        switch claim {
        case .inclusion: "inclusion"
        case .consistency: "consistency"
        }
    }
}

/// Lowercase hexadecimal digits of `bytes`, as ids, keys and hashes are shown.
public func hexadecimal(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}
