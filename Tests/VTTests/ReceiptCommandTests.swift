import Crypto
import Foundation
import StorageTestSupport
import Testing

/// `vt forget`'s erasure receipt, checked by `vt check-proof` and by a checker written here from
/// docs/PROOFS.md alone ("Erasure receipts", by hand): its signature over its first line, the
/// heads' signatures, the consistency proof, every inclusion proof, each leaf as the log holds it.
@Suite(.heavy) struct ReceiptCommandTests {
    let vt = CLI()
    let pinA = "1111000000000001"

    typealias Verifier = ProofCommandTests

    static func bytes(hex: Any?) -> [UInt8] {
        let text = Array((hex as? String ?? "").utf8)
        return stride(from: 0, to: text.count - 1, by: 2).map { UInt8(String(decoding: text[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    /// A signed head's message: `VTSH` ‖ map ‖ log ‖ u64 size ‖ i64 time ‖ root ‖ public key.
    static func headHolds(_ head: [String: Any]) -> Bool {
        let message = Array("VTSH".utf8) + bytes(hex: head["map"]) + bytes(hex: head["log"])
            + Verifier.littleEndian(UInt64(head["size"] as! Int)) + Verifier.littleEndian(Int64(head["time_us"] as! Int))
            + bytes(hex: head["root"]) + bytes(hex: head["public_key"])
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes(hex: head["public_key"])) else { return false }
        return key.isValidSignature(bytes(hex: head["signature"]), for: message)
    }

    /// Every step of "By hand"; the problems found.
    static func check(_ text: String, leaves: [[UInt8]]) throws -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 3, lines[2].isEmpty else { return ["not two lines"] }
        let receipt = try CLI.object(lines[0]), signature = try CLI.object(lines[1])
        var problems: [String] = []
        let key = try Curve25519.Signing.PublicKey(rawRepresentation: bytes(hex: signature["public_key"]))
        if !key.isValidSignature(bytes(hex: signature["signature"]), for: Array(lines[0].utf8)) { problems.append("signature") }
        let before = receipt["before"] as! [String: Any], after = receipt["after"] as! [String: Any]
        for head in [before, after] where !headHolds(head) || head["public_key"] as? String != signature["public_key"] as? String {
            problems.append("head")
        }
        let consistency = receipt["consistency"] as! [String: Any]
        if !Verifier.consistencyHolds(
            m: UInt64(before["size"] as! Int), n: UInt64(after["size"] as! Int), first: bytes(hex: before["root"]), second: bytes(hex: after["root"]),
            path: (consistency["path"] as! [String]).map { bytes(hex: $0) })
        {
            problems.append("consistency")
        }
        let erased = receipt["erased"] as! [[String: Any]]
        for proof in erased {
            let sequence = UInt64(proof["sequence"] as! Int)
            if proof["log"] as? String == before["log"] as? String,
                proof["size"] as? Int != before["size"] as? Int || proof["root"] as? String != before["root"] as? String
            {
                problems.append("event \(sequence) is not proved in the tree before")
            }
            if bytes(hex: proof["leaf"]) != leaves[Int(sequence) - 1] { problems.append("leaf \(sequence)") }
            if !Verifier.inclusionHolds(
                index: sequence - 1, size: UInt64(proof["size"] as! Int), leaf: bytes(hex: proof["leaf"]),
                path: (proof["path"] as! [String]).map { bytes(hex: $0) }, root: bytes(hex: proof["root"]))
            {
                problems.append("inclusion \(sequence)")
            }
        }
        if (receipt["removed"] as! [String: Any])["events"] as? Int != erased.count { problems.append("count") }
        return problems
    }

    @Test func aForgetWritesAReceiptThatAnyoneCanCheck() async throws {
        let seeded = try await SeededStore.make(label: "receipt-command")
        defer { seeded.remove() }
        let store = seeded.folder
        let forgot = try vt("forget", pinA, "--yes", "--json", "--store", store)
        #expect(forgot.status == 0, "\(forgot.errors)")
        let report = try CLI.object(forgot.output)
        let path = try #require(report["receipt"] as? String)
        #expect(report["receipt_problem"] == nil)
        #expect(path == store + "/receipts/forget-13-\(pinA).receipt")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(try Self.check(text, leaves: try Verifier.leaves(ofLogIn: store)).isEmpty)
        // The seeded pin A's events: 2 and 5 to 10, in the history of 12 before the forget.
        let erased = (try CLI.object(text.split(separator: "\n")[0])["erased"] as! [[String: Any]]).map { $0["sequence"] as! Int }
        #expect(erased == [2, 5, 6, 7, 8, 9, 10])

        let checked = try vt("check-proof", path)
        #expect(checked.status == 0 && checked.output.contains("holds") && checked.output.contains("7 event(s) of this device's log"), "\(checked.output)")
        let key = Self.bytes(hex: try CLI.object(text.split(separator: "\n")[1])["public_key"])
        #expect(try vt("check-proof", path, "--public-key", Verifier.hex(key)).status == 0)
        #expect(try vt("check-proof", path, "--public-key", String(repeating: "2", count: 64)).status == 3)
        #expect(try vt("check-proof", path, "--root", String(repeating: "2", count: 64)).status != 0)
        let receiptJSON = try CLI.object(try vt("check-proof", path, "--json").output)
        #expect(receiptJSON["kind"] as? String == "erasure_receipt" && receiptJSON["holds"] as? Bool == true)
        #expect(receiptJSON["pin"] as? String == "1111000000000001" && (receiptJSON["before"] as? [String: Any])?["size"] as? Int == 12)
        #expect((receiptJSON["erased"] as? [String: Int])?.values.reduce(0, +) == 7, "\(receiptJSON)")

        // One digit of a path changed: the signature no longer covers it (exit 3), and this
        // checker finds the same.
        let work = TemporaryFolder.made("receipt-command-files")
        let proofPath = (try CLI.object(text.split(separator: "\n")[0])["erased"] as! [[String: Any]])[3]["path"] as! [String]
        let digit = proofPath[0].first == "0" ? "1" : "0"
        let changed = text.replacingOccurrences(of: proofPath[0], with: digit + proofPath[0].dropFirst())
        try Data(changed.utf8).write(to: URL(fileURLWithPath: work.sub("changed.receipt")))
        let refused = try vt("check-proof", work.sub("changed.receipt"))
        #expect(refused.status == 3 && refused.output.contains("DOES NOT HOLD"), "\(refused.output)")
        let refusedJSON = try vt("check-proof", work.sub("changed.receipt"), "--json")
        let refusedHolds = try CLI.object(refusedJSON.output)["holds"] as? Bool
        #expect(refusedJSON.status == 3 && refusedHolds == false, "\(refusedJSON.output)")
        #expect(try Self.check(changed, leaves: try Verifier.leaves(ofLogIn: store)).contains("signature"))
        // Cut short: refused as unreadable, with the reason.
        try Data(text.prefix(200).utf8).write(to: URL(fileURLWithPath: work.sub("short.receipt")))
        let short = try vt("check-proof", work.sub("short.receipt"))
        #expect(short.status == 1 && short.errors.contains("cannot be read as an erasure receipt"), "\(short.errors)")

        // The store still opens and verifies with its receipts folder beside the log.
        #expect(try vt("verify", "--store", store).status == 0)
        let text2 = try vt("forget", "2222000000000002", "--yes", "--store", store)
        #expect(text2.output.contains("receipt: \(store)/receipts/forget-14-2222000000000002.receipt"), "\(text2.output)")
    }
}
