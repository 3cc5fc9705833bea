#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open descriptor. `close` is idempotent in effect: after it, every call throws `EBADF`.
final class PosixFile: RandomAccessFile {
    let path: String
    private var descriptor: Int32

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    private func open() throws -> Int32 {
        guard descriptor >= 0 else { throw IOError(operation: "use", path: path, code: EBADF) }
        return descriptor
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let fd = try open()
        var done = 0
        while done < buffer.count {
            let got = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw IOError.current("pread", path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let fd = try open()
        var done = 0
        while done < bytes.count {
            let put = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if put < 0 {
                if errno == EINTR { continue }
                throw IOError.current("pwrite", path)
            }
            done += put
        }
    }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(try open(), &info) == 0 else { throw IOError.current("fstat", path) }
        return Int64(info.st_size)
    }

    func truncate(to size: Int64) throws {
        let fd = try open()
        while ftruncate(fd, off_t(size)) != 0 {
            if errno != EINTR { throw IOError.current("ftruncate", path) }
        }
    }

    func sync() throws {
        let fd = try open()
        #if canImport(Darwin)
        // F_FULLFSYNC asks the drive to flush its cache; some file systems refuse it, and then
        // fsync is the best that exists.
        if fcntl(fd, F_FULLFSYNC) == 0 { return }
        guard fsync(fd) == 0 else { throw IOError.current("fsync", path) }
        #else
        while fdatasync(fd) != 0 {
            if errno != EINTR { throw IOError.current("fdatasync", path) }
        }
        #endif
    }

    func close() throws {
        guard descriptor >= 0 else { return }
        let fd = descriptor
        descriptor = -1
        // close(2) must not be retried on EINTR (the descriptor is gone either way on Linux).
        if systemClose(fd) != 0, errno != EINTR { throw IOError.current("close", path) }
    }
}
