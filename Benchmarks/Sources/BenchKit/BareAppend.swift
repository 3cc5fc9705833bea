import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The physical limit of a durable append on this disk: a loop of `pwrite` + `fdatasync` of
/// records of given sizes, with nothing else (no framing, no checks, no lock, no thread hop).
/// The engine's one-writer durable append is measured against it in the same run.
public enum BareAppend {
    /// Seconds to write and `fdatasync` each record in turn into a new file in `folder`.
    /// `preallocated`: the file is first filled with zeros and synced, so that no write grows
    /// it (what the log's hot tail does); otherwise every write extends the file.
    public static func seconds(recordSizes: [Int], preallocated: Bool, folder: String) throws -> Double {
        let path = folder + "/bare-\(UUID().uuidString.prefix(8))"
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw BareAppendError("open \(path): errno \(errno)") }
        defer {
            close(descriptor)
            unlink(path)
        }
        let total = recordSizes.reduce(0, +)
        if preallocated {
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            var offset = 0
            while offset < total {
                let count = min(zeros.count, total - offset)
                guard pwrite(descriptor, zeros, count, off_t(offset)) == count else { throw BareAppendError("preallocate: errno \(errno)") }
                offset += count
            }
            guard fsync(descriptor) == 0 else { throw BareAppendError("fsync: errno \(errno)") }
        }
        let record = [UInt8](repeating: 0xA5, count: recordSizes.max() ?? 0)
        var offset = 0
        return try Measure.seconds {
            for size in recordSizes {
                guard pwrite(descriptor, record, size, off_t(offset)) == size else { throw BareAppendError("pwrite: errno \(errno)") }
                guard fdatasync(descriptor) == 0 else { throw BareAppendError("fdatasync: errno \(errno)") }
                offset += size
            }
        }
    }
}

public struct BareAppendError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
