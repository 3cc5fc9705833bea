import CSHA256
import Crypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A hash of RFC 6962's tree (docs/PROOFS.md): a leaf (the event chain's `leaf(i)`), a node or
/// a root. 32 bytes.
public struct TreeHash: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Nil unless `bytes` is 32 bytes long.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// 64 hexadecimal digits (either case); nil for anything else.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// MTH of the empty tree: SHA-256 of nothing.
    public static let empty = TreeHash(Array(SHA256.hash(data: [UInt8]())))!

    /// An inner node: SHA-256(0x01 ‖ left ‖ right). On the CPU's SHA extensions when it has
    /// them (Sources/CSHA256, as the event chain does): a proof from a log hashes a node or two
    /// for every leaf it reads, and swift-crypto's hasher cost five times as much a node.
    public static func node(_ left: TreeHash, _ right: TreeHash) -> TreeHash {
        guard fastSHA256 else {
            var hasher = SHA256()
            hasher.update(data: [0x01])
            hasher.update(data: left.bytes)
            hasher.update(data: right.bytes)
            return TreeHash(Array(hasher.finalize()))!
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65) { input in
            input[0] = 0x01
            _ = UnsafeMutableBufferPointer(rebasing: input[1..<33]).initialize(from: left.bytes)
            _ = UnsafeMutableBufferPointer(rebasing: input[33..<65]).initialize(from: right.bytes)
            let digest = [UInt8](unsafeUninitializedCapacity: 32) { out, count in
                vt_sha256(input.baseAddress!, 65, out.baseAddress!)
                count = 32
            }
            return TreeHash(checked: digest)
        }
    }

    private init(checked bytes: [UInt8]) { self.bytes = bytes }

    /// Whether the SHA extensions are there (`VT_SHA256=portable` turns them off, as for the
    /// event chain).
    static let fastSHA256 = vt_sha256_available() == 1 && getenv("VT_SHA256").map { String(cString: $0) } != "portable"
}
