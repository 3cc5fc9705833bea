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
}
