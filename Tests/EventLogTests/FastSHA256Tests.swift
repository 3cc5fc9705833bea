import Crypto
import Testing
@testable import EventLog

/// The SHA extensions' SHA-256 that the event chain uses equals swift-crypto's on every length
/// around the block and padding boundaries, and on the chain's own inputs.
@Suite struct FastSHA256Tests {
    @Test(.enabled(if: FastSHA256.isAvailable, "the CPU has the SHA extensions (elsewhere the chain uses swift-crypto)"))
    func equalsSwiftCryptoOnEveryLengthUpTo300Bytes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let fast = bytes.withUnsafeBytes { EventChain.Words.sha256($0).bytes }
            #expect(fast == Array(SHA256.hash(data: bytes)), "length \(length)")
        }
        let large = [UInt8](repeating: 0x61, count: 1 << 20)
        #expect(large.withUnsafeBytes { EventChain.Words.sha256($0).bytes } == Array(SHA256.hash(data: large)))
    }

    @Test func theChainsLeafAndStepAreTheDocumentsInputs() {
        // leaf = SHA-256(0x00 ‖ u64 sequence ‖ i64 time ‖ digest), step over 0x01 ‖ head ‖ leaf,
        // built here byte by byte and hashed by swift-crypto.
        let digest = Array(SHA256.hash(data: Array("payload".utf8)))
        var leafInput: [UInt8] = [0x00]
        leafInput += withUnsafeBytes(of: UInt64(7).littleEndian, Array.init)
        leafInput += withUnsafeBytes(of: Int64(-5).littleEndian, Array.init)
        leafInput += digest
        let leaf = Array(SHA256.hash(data: leafInput))
        #expect(EventChain.leaf(sequence: 7, time: LogTimestamp(microsecondsSinceEpoch: -5), digest: digest).bytes == leaf)

        let base = ChainHash(bytes: Array(repeating: 0xAB, count: 32))
        var chain = EventChain(head: base, after: 6)
        chain.append(time: LogTimestamp(microsecondsSinceEpoch: -5), payload: Array("payload".utf8)[...])
        #expect(chain.head.bytes == Array(SHA256.hash(data: [0x01] + base.bytes + leaf)))
    }
}
