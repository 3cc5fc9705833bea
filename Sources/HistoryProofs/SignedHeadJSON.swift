import Foundation
import Proofs

/// The JSON form of a signed head, read strictly (an unknown or missing key, a value of the
/// wrong kind or length is refused, naming the key).
enum SignedHeadJSON {
    static let keys = ["kind", "map", "log", "size", "time_us", "root", "public_key", "signature"]

    static func decode(_ input: [UInt8], place: String) throws -> SignedHead {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(input))) as? [String: Any] else {
            throw ProofError("\(place) is neither a signed head's binary form nor a JSON object")
        }
        func refuse(_ why: String) -> ProofError { ProofError("\(place) cannot be read as a signed head: \(why)") }
        guard object["kind"] as? String == "signed_head" else { throw refuse("\"kind\" must be \"signed_head\"") }
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first { throw refuse("it holds the unknown key \"\(unknown)\"") }
        if let missing = keys.first(where: { object[$0] == nil }) { throw refuse("it lacks the key \"\(missing)\"") }
        func bytes(_ key: String, count: Int) throws -> [UInt8] {
            guard let text = object[key] as? String, let value = decodeHex(text), value.count == count else {
                throw refuse("\"\(key)\" must be \(2 * count) hexadecimal digits")
            }
            return value
        }
        func integer(_ key: String) throws -> Int64 {
            guard let value = JSONNumber.whole(object[key]) else { throw refuse("\"\(key)\" must be a whole number") }
            return value
        }
        // A new device's log has no events: its head is the empty tree's, of size 0.
        let size = try integer("size")
        guard size >= 0 else { throw refuse("\"size\" must be a whole number of at least 0") }
        return SignedHead(
            map: try bytes("map", count: 16), logID: try bytes("log", count: 16), treeSize: UInt64(size),
            time: try integer("time_us"), root: TreeHash(try bytes("root", count: 32))!, publicKey: try bytes("public_key", count: 32),
            signature: try bytes("signature", count: 64))
    }

    /// Lowercase or uppercase hexadecimal digits as bytes; nil for anything else.
    static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case 0x30...0x39: digit - 0x30
            case 0x61...0x66: digit - 0x61 + 10
            case 0x41...0x46: digit - 0x41 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }
}
