import Crypto
import EventLog
import Foundation
import Proofs

/// A tree head signed by the device that wrote the log (docs/PROOFS.md, "Signed heads"): the
/// map, the device (its log), the tree's size and root, when it was signed, the device's public
/// key and the Ed25519 signature of all of them.
///
/// Binary, little-endian: `VTSH`, map (16), log (16), size (8), time (i64 microseconds since
/// 1970), root (32), public key (32): the signed message, 116 bytes; then the signature (64)
/// and CRC32C of everything before (4): 184 bytes.
public struct SignedHead: Equatable, Sendable {
    static let magic = Array("VTSH".utf8)
    static let size = 184

    public var map: [UInt8]
    public var logID: [UInt8]
    public var treeSize: UInt64
    public var time: Int64
    public var root: TreeHash
    public var publicKey: [UInt8]
    public var signature: [UInt8]

    /// Signs the head of a log with `key`.
    public static func sign(
        map: [UInt8], logID: [UInt8], size: UInt64, root: TreeHash, time: Int64, key: SigningKey
    ) throws -> SignedHead {
        var head = SignedHead(map: map, logID: logID, treeSize: size, time: time, root: root, publicKey: key.publicKey, signature: [])
        head.signature = try key.sign(head.message)
        return head
    }

    /// The bytes the signature covers.
    var message: [UInt8] {
        var bytes = Self.magic + map + logID
        bytes.appendLittleEndian(treeSize)
        bytes.appendLittleEndian(time)
        return bytes + root.bytes + publicKey
    }

    /// Whether the signature is the public key's over the head.
    public func verify() -> Bool {
        guard signature.count == 64, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    public var binary: [UInt8] {
        var bytes = message + signature
        var crc = CRC32C()
        crc.update(bytes)
        bytes.appendLittleEndian(crc.value)
        return bytes
    }

    public static func isSignedHead(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: magic) || (bytes.count < 4096 && String(decoding: bytes, as: UTF8.self).contains("\"signed_head\""))
    }

    public static func decode(_ bytes: [UInt8], place: String) throws -> SignedHead {
        if !bytes.starts(with: magic) { return try SignedHeadJSON.decode(bytes, place: place) }
        guard bytes.count == size else { throw ProofError("\(place) has \(bytes.count) bytes; a signed head has \(size)") }
        var crc = CRC32C()
        crc.update(Array(bytes[..<(size - 4)]))
        guard crc.value == bytes.readLittleEndian(UInt32.self, at: size - 4) else {
            throw ProofError("\(place) is damaged: its CRC32C does not match its bytes")
        }
        return SignedHead(
            map: Array(bytes[4..<20]), logID: Array(bytes[20..<36]), treeSize: bytes.readLittleEndian(UInt64.self, at: 36),
            time: Int64(bitPattern: bytes.readLittleEndian(UInt64.self, at: 44)), root: TreeHash(Array(bytes[52..<84]))!,
            publicKey: Array(bytes[84..<116]), signature: Array(bytes[116..<180]))
    }

    /// One JSON object, keys in a fixed order.
    public var json: String {
        "{\"kind\": \"signed_head\", \"map\": \"\(hexadecimal(map))\", \"log\": \"\(hexadecimal(logID))\", \"size\": \(treeSize),"
            + " \"time_us\": \(time), \"root\": \"\(root)\", \"public_key\": \"\(hexadecimal(publicKey))\", \"signature\": \"\(hexadecimal(signature))\"}"
    }
}
