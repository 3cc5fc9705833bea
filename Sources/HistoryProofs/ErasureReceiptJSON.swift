import Foundation

/// The text of an erasure receipt (docs/PROOFS.md, "Erasure receipts"): its first line, keys in
/// a fixed order, and the signature's line; read as strictly as a proof.
enum ErasureReceiptJSON {
    static let keys = ["kind", "map", "pin", "before", "after", "consistency", "erased", "removed"]
    static let removedKeys = ["events", "photos", "snapshots_rewritten", "snapshots_removed", "quarantined_files", "former_log"]
    /// A forget erases at most this many events in one receipt's reading (a bound on what a
    /// damaged or hostile file may ask to hold).
    static let maxErased = 10_000_000

    static func body(_ receipt: ErasureReceipt) -> String {
        let removed = receipt.removed
        let counts =
            "{\"events\": \(removed.events), \"photos\": \(removed.photos), \"snapshots_rewritten\": \(removed.snapshotsRewritten),"
            + " \"snapshots_removed\": \(removed.snapshotsRemoved), \"quarantined_files\": \(removed.quarantinedFiles),"
            + " \"former_log\": \(removed.formerLog)}"
        return "{\"kind\": \"erasure_receipt\", \"map\": \"\(hexadecimal(receipt.map))\", \"pin\": \"\(receipt.pin)\","
            + " \"before\": \(receipt.before.json), \"after\": \(receipt.after.json), \"consistency\": \(receipt.consistency.json),"
            + " \"erased\": [" + receipt.erased.map(\.json).joined(separator: ", ") + "], \"removed\": \(counts)}"
    }

    static func signatureLine(_ receipt: ErasureReceipt) -> String {
        "{\"kind\": \"receipt_signature\", \"public_key\": \"\(hexadecimal(receipt.publicKey))\", \"signature\": \"\(hexadecimal(receipt.signature))\"}"
    }

    static func decode(_ input: [UInt8], place: String) throws -> ErasureReceipt {
        func refuse(_ why: String) -> ProofError { ProofError("\(place) cannot be read as an erasure receipt: \(why)") }
        var lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        if lines.last == [] { lines.removeLast() }
        guard lines.count == 2 else { throw refuse("it must be two lines, the receipt and its signature; it has \(lines.count)") }
        let object = try parse(lines[0], refuse)
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first { throw refuse("it holds the unknown key \"\(unknown)\"") }
        if let missing = keys.first(where: { object[$0] == nil }) { throw refuse("it lacks the key \"\(missing)\"") }
        guard object["kind"] as? String == "erasure_receipt" else { throw refuse("\"kind\" must be \"erasure_receipt\"") }
        guard let mapText = object["map"] as? String, let map = SignedHeadJSON.decodeHex(mapText), map.count == 16 else {
            throw refuse("\"map\" must be 32 hexadecimal digits")
        }
        guard let pin = object["pin"] as? String, pin.utf8.count == 16, SignedHeadJSON.decodeHex(pin) != nil else {
            throw refuse("\"pin\" must be 16 hexadecimal digits")
        }
        func nested(_ key: String, _ value: Any?) throws -> [UInt8] {
            guard let value = value as? [String: Any], let data = try? JSONSerialization.data(withJSONObject: value) else {
                throw refuse("\"\(key)\" must be a JSON object")
            }
            return Array(data)
        }
        let before = try SignedHeadJSON.decode(try nested("before", object["before"]), place: "\(place) (its head before)")
        let after = try SignedHeadJSON.decode(try nested("after", object["after"]), place: "\(place) (its head after)")
        let consistency = try ProofJSON.decode(try nested("consistency", object["consistency"]), place: "\(place) (its consistency proof)")
        guard let erasedValues = object["erased"] as? [Any], erasedValues.count <= maxErased else {
            throw refuse("\"erased\" must be a list of inclusion proofs")
        }
        let erased = try erasedValues.enumerated().map { index, value in
            try ProofJSON.decode(try nested("erased", value), place: "\(place) (erased event \(index + 1))")
        }
        var receipt = ErasureReceipt(
            map: map, pin: pin, before: before, after: after, consistency: consistency, erased: erased,
            removed: try removed(object["removed"], refuse))
        let signature = try parse(lines[1], refuse)
        guard signature["kind"] as? String == "receipt_signature", Set(signature.keys) == ["kind", "public_key", "signature"],
            let keyText = signature["public_key"] as? String, let key = SignedHeadJSON.decodeHex(keyText), key.count == 32,
            let signatureText = signature["signature"] as? String, let bytes = SignedHeadJSON.decodeHex(signatureText), bytes.count == 64
        else {
            throw refuse("its second line must be {\"kind\": \"receipt_signature\", \"public_key\": <64 hex>, \"signature\": <128 hex>}")
        }
        receipt.publicKey = key
        receipt.signature = bytes
        // The signature covers the first line's bytes: a receipt written with other spacing
        // or key order is another text, and is refused rather than checked against it.
        guard Array(body(receipt).utf8) == lines[0] else {
            throw refuse("its first line is not in the receipt's own form (keys in order, one space after each separator)")
        }
        return receipt
    }

    private static func parse(_ line: [UInt8], _ refuse: (String) -> ProofError) throws -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            throw refuse("a line is not a JSON object")
        }
        return object
    }

    private static func removed(_ value: Any?, _ refuse: (String) -> ProofError) throws -> ErasureReceipt.Removed {
        guard let object = value as? [String: Any], Set(object.keys) == Set(removedKeys) else {
            throw refuse("\"removed\" must hold exactly " + removedKeys.map { "\"\($0)\"" }.joined(separator: ", "))
        }
        func count(_ key: String) throws -> UInt64 {
            guard let whole = JSONNumber.whole(object[key]), whole >= 0 else { throw refuse("\"removed\".\"\(key)\" must be a whole number") }
            return UInt64(whole)
        }
        guard let flag = object["former_log"] as? NSNumber, String(cString: flag.objCType) == "c", let formerLog = object["former_log"] as? Bool else { throw refuse("\"removed\".\"former_log\" must be true or false") }
        var removed = ErasureReceipt.Removed()
        removed.events = try count("events")
        removed.photos = Int(clamping: try count("photos"))
        removed.snapshotsRewritten = Int(clamping: try count("snapshots_rewritten"))
        removed.snapshotsRemoved = Int(clamping: try count("snapshots_removed"))
        removed.quarantinedFiles = Int(clamping: try count("quarantined_files"))
        removed.formerLog = formerLog
        return removed
    }
}
