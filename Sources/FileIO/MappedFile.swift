#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A whole file's bytes, mapped read-only into memory and unmapped when the value goes away.
///
/// Why: a snapshot's load read 20 MB into fresh memory, a copy and a page fault for every
/// 4 KiB of it, before decoding a byte (docs/BENCHMARKS-JOURNAL.md, "Snapshots loaded in pieces, from
/// a mapping"). The mapping is populated at once from the page cache, so decoding takes no
/// faults either.
///
/// The rule that makes it safe: map only files that are never truncated or written in place
/// while they exist (snapshots: written under another name and renamed, removed whole). A
/// removed file's pages stay readable through the mapping. A file shortened under the mapping
/// by someone else would make reading past its new end a bus error, which is why nothing
/// else is mapped.
public final class MappedFile: @unchecked Sendable {
    /// The file's bytes, valid while this value lives; never written.
    public let bytes: UnsafeRawBufferPointer
    private let mapping: UnsafeMutableRawPointer?

    fileprivate init(mapping: UnsafeMutableRawPointer?, count: Int) {
        self.mapping = mapping
        bytes = UnsafeRawBufferPointer(start: mapping, count: count)
    }

    deinit {
        if let mapping { munmap(mapping, bytes.count) }
    }
}

extension PosixFileSystem {
    public func mapForReading(_ path: String) throws -> MappedFile? {
        let descriptor = try openDescriptor(path, O_RDONLY)
        defer { _ = systemClose(descriptor) }
        try checkRegularFile(descriptor, path: path, forWriting: false)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw IOError.current("fstat", path) }
        // An empty file has nothing to map (and mmap refuses a length of 0).
        guard info.st_size > 0 else { return MappedFile(mapping: nil, count: 0) }
        guard let count = Int(exactly: info.st_size) else { throw IOError(operation: "mmap", path: path, code: EFBIG) }
        #if os(Linux)
        let flags = MAP_PRIVATE | MAP_POPULATE
        #else
        let flags = MAP_PRIVATE
        #endif
        let mapping = mmap(nil, count, PROT_READ, flags, descriptor, 0)
        guard let mapping, mapping != MAP_FAILED else { throw IOError.current("mmap", path) }
        return MappedFile(mapping: mapping, count: count)
    }
}
