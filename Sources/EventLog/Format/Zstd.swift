import CZstd

/// A reusable zstd compression context at a fixed level.
///
/// One per writer: contexts are expensive to create and not safe to share between threads.
public final class ZstdCompressor {
    private let context: OpaquePointer
    public let level: Int32

    /// The levels the linked libzstd accepts, such as -131072...22.
    public static var levels: ClosedRange<Int32> { ZSTD_minCLevel()...ZSTD_maxCLevel() }

    public init(level: Int32) throws {
        guard ZstdCompressor.levels.contains(level) else {
            throw LogError(.invalidArgument, "zstd level \(level) is outside \(ZstdCompressor.levels)")
        }
        guard let context = ZSTD_createCCtx() else {
            throw LogError(.invalidArgument, "zstd could not allocate a compression context")
        }
        self.context = context
        self.level = level
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        // The batch CRC already covers the bytes; zstd's own frame checksum would repeat it.
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0)
        ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1)
    }

    deinit { ZSTD_freeCCtx(context) }

    /// Compresses `source` into one standard frame appended to `output`. Returns the frame's
    /// length, or nil when zstd reports an error.
    public func compress(_ source: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) -> Int? {
        let bound = ZSTD_compressBound(source.count)
        let start = output.count
        output.reserveCapacity(start + bound)
        var written = 0
        output.append(contentsOf: repeatElement(0, count: bound))
        output.withUnsafeMutableBytes { destination in
            written = ZSTD_compress2(context, destination.baseAddress! + start, bound, source.baseAddress, source.count)
        }
        guard ZSTD_isError(written) == 0 else {
            output.removeLast(bound)
            return nil
        }
        output.removeLast(bound - written)
        return written
    }
}

/// A reusable zstd decompression context.
public final class ZstdDecompressor {
    private let context: OpaquePointer
    /// ``withSingleFrame(_:maxRawLength:_:)``'s buffer, kept from call to call up to
    /// ``scratchLimit`` bytes.
    private var scratchBuffer: UnsafeMutableRawPointer?
    private var scratchCapacity = 0
    private static let scratchLimit = 8 << 20

    public init() {
        guard let context = ZSTD_createDCtx() else { fatalError("zstd could not allocate a decompression context") }
        self.context = context
    }

    deinit {
        ZSTD_freeDCtx(context)
        scratchBuffer?.deallocate()
    }

    /// A buffer of at least `bytes`: the kept one when it is large enough.
    private func scratch(_ bytes: Int) -> UnsafeMutableRawPointer {
        if let scratchBuffer, scratchCapacity >= bytes { return scratchBuffer }
        scratchBuffer?.deallocate()
        scratchCapacity = max(bytes, 1)
        scratchBuffer = .allocate(byteCount: scratchCapacity, alignment: 16)
        return scratchBuffer!
    }

    /// Lets go of a buffer over ``scratchLimit`` (a rare huge block) once it has served.
    private func trimScratch() {
        guard scratchCapacity > Self.scratchLimit else { return }
        scratchBuffer?.deallocate()
        scratchBuffer = nil
        scratchCapacity = 0
    }

    /// Decompresses one frame whose content must be exactly `rawLength` bytes. Returns nil when
    /// the frame is invalid or its content has another length.
    public func decompress(_ frame: UnsafeRawBufferPointer, rawLength: Int) -> [UInt8]? {
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: rawLength) { buffer, count in
            let produced = ZSTD_decompressDCtx(context, buffer.baseAddress, rawLength, frame.baseAddress, frame.count)
            if ZSTD_isError(produced) != 0 || produced != rawLength {
                failed = true
                count = 0
            } else {
                count = rawLength
            }
        }
        return failed ? nil : output
    }
}

extension ZstdDecompressor {
    /// The content size a single frame states, checked by the rules
    /// ``decompressSingleFrame(_:maxRawLength:)`` names.
    private static func singleFrameContentSize(_ frame: UnsafeRawBufferPointer, maxRawLength: Int) -> Result<Int, DamageReason> {
        guard frame.count > 0 else { return .failure(DamageReason("zstd frame is empty")) }
        let frameLength = ZSTD_findFrameCompressedSize(frame.baseAddress, frame.count)
        guard ZSTD_isError(frameLength) == 0 else { return .failure(DamageReason("zstd frame is malformed")) }
        guard frameLength == frame.count else {
            return .failure(DamageReason("zstd frame is followed by \(frame.count - frameLength) other bytes"))
        }
        let contentSize = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values.
        guard contentSize < UInt64.max - 1 else {
            return .failure(DamageReason("zstd frame does not state its content size"))
        }
        guard contentSize <= UInt64(maxRawLength) else {
            return .failure(DamageReason("zstd frame states \(contentSize) bytes, over the 64 MiB limit"))
        }
        return .success(Int(contentSize))
    }

    /// Decompresses a payload that must be exactly one zstd frame stating its content size, with
    /// no bytes after it, whose content is at most `maxRawLength` bytes (FORMAT.md, format 2's
    /// validity rules). The failure says which rule broke.
    func decompressSingleFrame(_ frame: UnsafeRawBufferPointer, maxRawLength: Int) -> Result<[UInt8], DamageReason> {
        let contentSize: Int
        switch Self.singleFrameContentSize(frame, maxRawLength: maxRawLength) {
        case .success(let size): contentSize = size
        case .failure(let reason): return .failure(reason)
        }
        guard let output = decompress(frame, rawLength: contentSize) else {
            return .failure(DamageReason("zstd frame does not decompress to the \(contentSize) bytes it states"))
        }
        return .success(output)
    }

    /// Decompresses one frame by the same rules into the decompressor's own buffer and hands
    /// `body` its content, valid only during the call: a codec-2 block's field form is read
    /// once and dropped, and a fresh buffer for every block costs a page fault every 4 KiB.
    func withSingleFrame<T>(
        _ frame: UnsafeRawBufferPointer, maxRawLength: Int, _ body: (UnsafeRawBufferPointer) -> Result<T, DamageReason>
    ) -> Result<T, DamageReason> {
        let contentSize: Int
        switch Self.singleFrameContentSize(frame, maxRawLength: maxRawLength) {
        case .success(let size): contentSize = size
        case .failure(let reason): return .failure(reason)
        }
        let buffer = scratch(contentSize)
        let produced = ZSTD_decompressDCtx(context, buffer, contentSize, frame.baseAddress, frame.count)
        guard ZSTD_isError(produced) == 0, produced == contentSize else {
            trimScratch()
            return .failure(DamageReason("zstd frame does not decompress to the \(contentSize) bytes it states"))
        }
        defer { trimScratch() }
        return body(UnsafeRawBufferPointer(start: buffer, count: contentSize))
    }
}
