import FileIO

/// The zeros a writer keeps ahead of the data (FORMAT.md, "Zero tail"), shared by both formats.
enum ZeroTail {
    private static let zeros = [UInt8](repeating: 0, count: 256 << 10)

    /// Writes zeros from `allocatedEnd` up to the next multiple of `chunk` that covers `end`,
    /// and returns the new allocated end (unchanged when `end` is already covered). On failure
    /// the file is cut back to `allocatedEnd`.
    static func extend(
        _ file: any RandomAccessFile, path: String, from allocatedEnd: Int64, toCover end: Int64, chunk: Int
    ) throws -> Int64 {
        guard end > allocatedEnd else { return allocatedEnd }
        let size = Int64(chunk)
        let target = (end + size - 1) / size * size
        var position = allocatedEnd
        do {
            while position < target {
                let count = Int(min(Int64(zeros.count), target - position))
                try zeros.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: position) }
                position += Int64(count)
            }
        } catch let error as IOError {
            try? file.truncate(to: allocatedEnd)
            throw LogError.io(error, "extend \(path)")
        }
        return target
    }

    /// Writes a record (or a format-1 batch) at `offset`, the end of data. When the write fails
    /// no part of it may stay: the file is cut back to `offset` (and `allocatedEnd` with it).
    /// When even the cut fails, `failure` is set: only a reopen can sort the file out.
    static func write(
        _ bytes: [UInt8], to file: any RandomAccessFile, path: String, at offset: Int64, allocatedEnd: inout Int64,
        failure: inout LogError?
    ) throws {
        do {
            try file.write(bytes, at: offset)
        } catch let error as IOError {
            do {
                try file.truncate(to: offset)
                allocatedEnd = offset
            } catch {
                failure = LogError(
                    .writerFailed, "a failed append could not be undone in \(path); reopen the log",
                    file: path, offset: offset, cause: error as? IOError)
            }
            throw LogError.io(error, "append to \(path)")
        }
    }
}
