import Crypto

/// A SHA-256 value linking one batch to the next (FORMAT.md, "The hash chain").
///
/// ```swift
/// let genesis = ChainHash.of(segmentHeaderBytes)
/// let next = ChainHash.ofBatch(header: headerBytes, payload: payloadBytes)
/// ```
public struct ChainHash: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes.
    public let bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "a SHA-256 value is 32 bytes")
        self.bytes = bytes
    }

    /// A hash read back from elsewhere (a snapshot, a receipt); nil unless it is 32 bytes.
    public init?(validating bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// The hash of one run of bytes.
    static func of(_ bytes: UnsafeRawBufferPointer) -> ChainHash {
        ChainHash(bytes: Array(SHA256.hash(data: bytes)))
    }

    static func of(_ bytes: [UInt8]) -> ChainHash {
        bytes.withUnsafeBytes { of($0) }
    }

    /// The hash of a batch as it is on disk: its header, then its stored payload.
    static func ofBatch(header: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> ChainHash {
        var hasher = SHA256()
        hasher.update(bufferPointer: header)
        hasher.update(bufferPointer: payload)
        return ChainHash(bytes: Array(hasher.finalize()))
    }

    /// Lowercase hexadecimal.
    public var description: String { hex(bytes) }
}
