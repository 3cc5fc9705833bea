import FileIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one-writer rule (LOG.md, rule 4): the lock file every writer of a log (the log itself,
/// an upgrade, a repair's caller) takes, and the line that names its holder.
extension EventLog {
    /// Takes the writer's lock of the log in `directory`; `whenHeld` words the refusal from the
    /// holder's line.
    static func takeLock(
        of directory: String, holder: String, fileSystem: any FileSystem, whenHeld: (String) -> String
    ) throws -> any HeldLock {
        do {
            return try fileSystem.lock(Path.join(directory, LogFiles.lockFileName), holder: holder)
        } catch let held as LockHeldError {
            throw LogError(.locked, whenHeld(held.holder), file: held.path, cause: held)
        } catch let error as IOError {
            throw LogError.io(error, "lock the log at \(directory)")
        }
    }

    /// Takes the writer's lock of the log in `directory` without opening the log: for work beside
    /// it that must not run while a writer has it open (a store's sync writes the other devices'
    /// copies under its own log's lock, as an open store holds it). `release()` lets it go.
    ///
    /// - Throws: ``LogError`` `.locked` naming the holder; `.io`.
    public static func writerLock(of directory: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> any HeldLock {
        try takeLock(of: directory, holder: holderLine(), fileSystem: fileSystem.confined(to: directory)) { holder in
            "the log at \(directory) is already open for writing by another program (\(holder))"
        }
    }

    static func holderLine() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        return "pid=\(getpid()) host=\(host) since=\(SystemClock().now())"
    }
}
