import CZlib

/// Reading the gzip files the data ships in (zlib's `inflate`): the files are made once by
/// `scripts/make-places-data`, and gzip is what a browser takes as it is, so the land outlines
/// are served without recompressing them.
enum Gunzip {
    /// The whole decompressed content of `bytes` (one gzip member).
    ///
    /// - Throws: ``PlaceDataError`` when the bytes are not gzip or are cut short.
    static func decompress(_ bytes: [UInt8], name: String) throws(PlaceDataError) -> [UInt8] {
        var stream = z_stream()
        // 16 + 15: a gzip header and trailer around a deflate stream with the largest window.
        guard inflateInit2_(&stream, 16 + 15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw PlaceDataError("\(name): zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 4)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var input = bytes
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            var status = Z_OK
            while status == Z_OK {
                status = chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if status == Z_BUF_ERROR && stream.avail_in == 0 { break }
            }
            return status
        }
        guard status == Z_STREAM_END else {
            throw PlaceDataError("\(name) is not a whole gzip file (zlib status \(status))")
        }
        return output
    }
}

/// The Places data files are missing or damaged (a broken build or checkout; never user input).
public struct PlaceDataError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
