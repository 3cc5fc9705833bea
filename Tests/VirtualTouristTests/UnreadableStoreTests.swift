import FileIO
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// A store folder that cannot be read is not a folder without a store: `vt verify` says what
/// failed and what to do, never "it has no log/ folder" (issue 46).
@Suite struct UnreadableStoreTests {
    /// The real file system, but looking at anything named `log` is refused, as a folder of
    /// another user's would be.
    struct Unreadable: FileSystem {
        let real = PosixFileSystem()
        func openFile(_ path: String, _ mode: OpenMode) throws -> any RandomAccessFile { try real.openFile(path, mode) }
        func createDirectory(_ path: String) throws { try real.createDirectory(path) }
        func listDirectory(_ path: String) throws -> [String] { try real.listDirectory(path) }
        func status(_ path: String) throws -> FileStatus? {
            if Path.name(of: path) == "log" { throw IOError(operation: "stat", path: path, code: EACCES) }
            return try real.status(path)
        }
        func rename(_ source: String, to destination: String) throws { try real.rename(source, to: destination) }
        func removeFile(_ path: String) throws { try real.removeFile(path) }
        func removeDirectory(_ path: String) throws { try real.removeDirectory(path) }
        func syncDirectory(_ path: String) throws { try real.syncDirectory(path) }
        func setModificationTime(_ path: String, to time: Duration?) throws { try real.setModificationTime(path, to: time) }
        func lock(_ path: String, holder: String) throws -> any HeldLock { try real.lock(path, holder: holder) }
    }

    @Test func verifyingAFolderItMayNotReadSaysSoAndWhatToDo() throws {
        let folder = TemporaryFolder("unreadable")
        try FileManager.default.createDirectory(atPath: folder.sub("log"), withIntermediateDirectories: true)
        #expect {
            try StoreAudit.verify(folder: folder.path, checkPhotoContents: false, fileSystem: Unreadable())
        } throws: { error in
            let text = "\(error)"
            return (error as? DomainError)?.code == .storage && text.contains("permission denied") && !text.contains("no log/ folder")
        }
        // A folder that truly has no log is still named as not a store.
        let empty = TemporaryFolder("no-store")
        try FileManager.default.createDirectory(atPath: empty.path, withIntermediateDirectories: true)
        #expect { try StoreAudit.verify(folder: empty.path, checkPhotoContents: false) } throws: { error in
            (error as? DomainError)?.code == .notAStore && "\(error)".contains("no log/ folder")
        }
    }
}
