import FileIO

/// Where a format-2 log's chain is anchored: nothing (a new log), or the format-1 log it was
/// upgraded from (FORMAT.md, "Upgrade from format 1").
public struct LogOrigin: Equatable, Sendable {
    /// Events carried over from a format-1 log; 0 for a log created in format 2.
    public var sequence: UInt64
    /// The format-1 head hash at ``sequence``; nil when that is 0.
    public var hash: ChainHash?

    public static let none = LogOrigin(sequence: 0, hash: nil)

    public init(sequence: UInt64, hash: ChainHash?) {
        self.sequence = sequence
        self.hash = sequence == 0 ? nil : hash
    }

    /// Reads the 40 bytes at `offset`. A hash without carried-over events, or carried-over
    /// events without a hash, is corruption: the anchor hashes the bytes as stored, so either
    /// would let two files claim one origin with different bytes.
    init(_ bytes: [UInt8], at offset: Int, file: String) throws {
        let sequence = bytes.getLittleEndian(UInt64.self, at: offset)
        let hash = Array(bytes[offset + 8..<offset + 40])
        let zero = hash.allSatisfy { $0 == 0 }
        guard zero == (sequence == 0) else {
            throw LogError(
                .corrupt,
                "the log is damaged: \(file)'s origin_hash is \(zero ? "zero" : "not zero") while its origin_sequence is \(sequence)",
                file: file, offset: Int64(offset))
        }
        self.init(sequence: sequence, hash: zero ? nil : ChainHash(bytes: hash))
    }

    func append(to bytes: inout [UInt8]) {
        bytes.appendLittleEndian(sequence)
        bytes.append(contentsOf: hash?.bytes ?? [UInt8](repeating: 0, count: 32))
    }

    func anchor(logID: [UInt8]) -> ChainHash {
        EventChain.anchor(logID: logID, originSequence: sequence, originHash: hash)
    }
}
