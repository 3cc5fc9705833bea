import FileIO

/// A buffered view of a file read at explicit offsets, so that scanning many small batches
/// costs one `pread` per chunk instead of two per batch.
///
/// The bytes returned are valid until the next call. The window never assumes the file is
/// final: bytes it has not seen are read again, and ``invalidate()`` drops everything (a writer
/// may since have overwritten a zero tail, or recovery may have cut it).
///
/// Reads start small (64 KiB) and double while the reads run on sequentially, up to
/// `chunkSize`: a random access costs one small read, a replay soon reads 1 MiB at a time.
final class ReadWindow {
    let file: any RandomAccessFile
    private let chunkSize: Int
    private var nextRead: Int
    private var storage: UnsafeMutableRawBufferPointer
    private var start: Int64 = 0
    private var count = 0

    init(file: any RandomAccessFile, chunkSize: Int = 1 << 20) {
        self.file = file
        self.chunkSize = chunkSize
        self.nextRead = min(chunkSize, 64 << 10)
        self.storage = .allocate(byteCount: nextRead, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// `length` bytes at `offset`, or nil when the file ends before `offset + length`.
    func bytes(at offset: Int64, count length: Int) throws -> UnsafeRawBufferPointer? {
        // An offset from a damaged index (its entry's checksum intact) can be near Int64.max,
        // where no file has bytes; `offset + length` must not overflow.
        guard offset >= 0, offset <= Int64.max - Int64(length) else { return nil }
        if offset >= start, offset + Int64(length) <= start + Int64(count) {
            let from = Int(offset - start)
            return UnsafeRawBufferPointer(rebasing: storage[from..<from + length])
        }
        let sequential = count > 0 && offset >= start && offset <= start + Int64(count)
        nextRead = sequential ? min(chunkSize, nextRead * 2) : min(chunkSize, 64 << 10)
        var wanted = max(length, nextRead)
        if wanted > storage.count, length > nextRead {
            // A damaged batch header with a valid checksum can claim up to 4 GiB: allocate no
            // more than the file holds, and let the short read answer that it ends before.
            let size = try io("read the size of \(file.path)") { try file.size() }
            wanted = max(nextRead, Int(clamping: min(Int64(wanted), size - offset)))
        }
        if wanted > storage.count {
            storage.deallocate()
            storage = .allocate(byteCount: wanted, alignment: 16)
        }
        start = offset
        count = 0
        count = try io("read \(file.path)") {
            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[0..<wanted]), at: offset)
        }
        guard count >= length else { return nil }
        return UnsafeRawBufferPointer(rebasing: storage[0..<length])
    }

    /// The offset of the first non-zero byte at or after `offset`, or nil when only zeros follow.
    func nonZeroOffset(from offset: Int64) throws -> Int64? {
        var chunkStart = offset
        while true {
            let chunk = try available(at: chunkStart, upTo: 1 << 20)
            if chunk.isEmpty { return nil }
            if let index = Self.firstNonZero(in: chunk) { return chunkStart + Int64(index) }
            chunkStart += Int64(chunk.count)
        }
    }

    /// The index of the first non-zero byte of `bytes`. Every reader that opens a live segment
    /// checks its preallocated rest (up to a MiB of zeros) once; a device that syncs opens its
    /// logs for every take, and a byte at a time this was a tenth of its CPU (docs/SYNC.md), so
    /// the zeros are tested 32 bytes at a time.
    static func firstNonZero(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var index = 0
        while index + 32 <= bytes.count {
            let any = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                | base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                | base.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                | base.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
            if any != 0 { break }
            index += 32
        }
        while index < bytes.count {
            if bytes[index] != 0 { return index }
            index += 1
        }
        return nil
    }

    /// Up to `length` bytes at `offset`: fewer at the end of the file.
    func available(at offset: Int64, upTo length: Int) throws -> UnsafeRawBufferPointer {
        if let whole = try bytes(at: offset, count: length) { return whole }
        return cached(at: offset, upTo: length)
    }

    /// What the last read brought in at `offset`, up to `length` bytes, without reading again:
    /// after ``bytes(at:count:)`` came up short, this is the same view of the file, not a newer
    /// one (a writer may be growing it).
    func cached(at offset: Int64, upTo length: Int) -> UnsafeRawBufferPointer {
        guard offset >= start, offset <= start + Int64(count) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let from = Int(offset - start)
        return UnsafeRawBufferPointer(rebasing: storage[from..<min(count, from + length)])
    }

    func invalidate() { count = 0 }

    func close() { try? file.close() }
}
