@testable import FileIO
import Foundation
import StorageTestSupport
import Testing

/// The real file system follows no symbolic link at a file's own name, and, confined to a
/// folder, none anywhere below it; it writes only into regular files that have no other name
/// (docs/SECURITY.md). Each check would fail on a file system that follows links.
@Suite struct ConfinedFolderTests {
    let outside = TemporaryFolder("confined-outside")
    let folder = TemporaryFolder("confined")

    init() throws {
        for path in [outside.path, folder.sub("inner")] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: outside.sub("precious")))
    }

    private var precious: String { (try? String(contentsOfFile: outside.sub("precious"), encoding: .utf8)) ?? "(gone)" }

    private func code(_ call: () throws -> Void) -> Int32? {
        do { try call(); return nil } catch let error as IOError { return error.code } catch { return -1 }
    }

    @Test func aLinkAtAFilesOwnNameIsNotFollowedEvenUnconfined() throws {
        let fileSystem = PosixFileSystem()
        try FileManager.default.createSymbolicLink(atPath: folder.sub("inner/file"), withDestinationPath: outside.sub("precious"))
        for mode in [OpenMode.readOnly, .readWrite, .createOrTruncate, .createNew] {
            let failed = code { _ = try fileSystem.openFile(folder.sub("inner/file"), mode) }
            #expect(failed == (mode == .createNew ? EEXIST : ELOOP), "\(mode)")
        }
        #expect(code { _ = try fileSystem.lock(folder.sub("inner/file"), holder: "me") } == ELOOP)
        #expect(code { _ = try fileSystem.mapForReading(folder.sub("inner/file")) } == ELOOP)
        #expect(precious == "precious\n")
    }

    /// Both ways of resolving a confined path: `openat2` in one call, and the walk a name at a
    /// time that systems without it take (and that names the link when one call meets one).
    @Test(arguments: [false, true]) func confinedALinkAtAFolderOnTheWayIsNotFollowed(walking: Bool) throws {
        let fileSystem = PosixFileSystem(confinedTo: folder.path, walkingEachName: walking)
        try FileManager.default.createSymbolicLink(atPath: folder.sub("inner/away"), withDestinationPath: outside.path)
        let through = folder.sub("inner/away/precious")
        #expect(code { _ = try fileSystem.openFile(through, .readWrite) } == ELOOP)
        #expect(code { _ = try fileSystem.openFile(folder.sub("inner/away/new"), .createNew) } == ELOOP)
        #expect(code { _ = try fileSystem.listDirectory(folder.sub("inner/away")) } == ELOOP)
        #expect(code { _ = try fileSystem.status(through) } == ELOOP)
        #expect(code { _ = try fileSystem.status(folder.sub("inner/away")) } == ELOOP)
        #expect(code { try fileSystem.removeFile(through) } == ELOOP)
        #expect(code { try fileSystem.setModificationTime(through, to: .seconds(1)) } == ELOOP)
        #expect(code { try fileSystem.createDirectory(folder.sub("inner/away/deeper")) } == ELOOP)
        #expect(code { try fileSystem.rename(folder.sub("inner/x"), to: through) } == ELOOP)
        #expect(code { _ = try fileSystem.lock(folder.sub("inner/away/LOCK"), holder: "me") } == ELOOP)
        #expect(code { _ = try fileSystem.openFolder(folder.sub("inner/away")) } == ELOOP)
        let inner = try fileSystem.openFolder(folder.sub("inner"))
        #expect(code { _ = try inner.status("away") } == ELOOP)
        #expect(code { try inner.removeFile("away/precious") } == EINVAL)
        #expect(code { _ = try inner.status("..") } == EINVAL)
        #expect(precious == "precious\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["precious"])
        // The same path without confinement follows the folder's link: the confinement is what
        // stops it.
        #expect(code { _ = try PosixFileSystem().status(through) } == nil)
    }

    @Test(arguments: [false, true]) func confinedTheFolderItselfIsReachedAsNamedAndWorkBelowItGoesOn(walking: Bool) throws {
        // A store opened through a link to it is the person's choice.
        try FileManager.default.createSymbolicLink(atPath: outside.sub("shortcut"), withDestinationPath: folder.path)
        let fileSystem = PosixFileSystem(confinedTo: outside.sub("shortcut"), walkingEachName: walking)
        let path = outside.sub("shortcut/inner/deeper/file")
        try fileSystem.createDirectory(Path.directory(of: path))
        try fileSystem.writeAtomically(Array("new".utf8), to: path)
        #expect(try fileSystem.listDirectory(outside.sub("shortcut/inner")) == ["deeper"])
        #expect(try fileSystem.status(path)?.kind == .file)
        try fileSystem.rename(path, to: path + ".moved")
        // A folder held open: its entries by name, one lookup each.
        let deeper = try fileSystem.openFolder(Path.directory(of: path))
        #expect(try deeper.names() == ["file.moved"])
        #expect(try deeper.status("file.moved")?.size == 3)
        #expect(try deeper.status("missing") == nil)
        try deeper.removeFile("file.moved")
        #expect(try deeper.names() == [])
        try fileSystem.writeAtomically(Array("new".utf8), to: path + ".moved")
        try fileSystem.removeFile(path + ".moved")
        try fileSystem.removeDirectory(Path.directory(of: path))
        #expect(try fileSystem.status(Path.directory(of: path)) == nil)
        #expect(try fileSystem.status(outside.sub("shortcut"))?.kind == .directory)
    }

    @Test func aFileWithOtherNamesIsNotWrittenAndAPipeIsNotOpened() throws {
        let fileSystem = PosixFileSystem().confined(to: folder.path)
        try FileManager.default.linkItem(atPath: outside.sub("precious"), toPath: folder.sub("inner/linked"))
        #expect(code { _ = try fileSystem.openFile(folder.sub("inner/linked"), .readWrite) } == EMLINK)
        #expect(code { _ = try fileSystem.openFile(folder.sub("inner/linked"), .createOrTruncate) } == EMLINK)
        #expect(code { _ = try fileSystem.lock(folder.sub("inner/linked"), holder: "me") } == EMLINK)
        #expect(code { _ = try fileSystem.openFile(folder.sub("inner/linked"), .readOnly) } == nil)
        #expect(precious == "precious\n")

        #expect(mkfifo(folder.sub("inner/pipe"), 0o644) == 0)
        #expect(code { _ = try fileSystem.openFile(folder.sub("inner/pipe"), .readOnly) } == ENXIO)
        #expect(code { _ = try fileSystem.lock(folder.sub("inner/pipe"), holder: "me") } == ENXIO)
    }

    @Test func refusalsSayWhatToDo() {
        #expect(IOError(operation: "open", path: "s/log/LOCK", code: ELOOP).advice.contains("symbolic link"))
        #expect(IOError(operation: "open", path: "s/x", code: EMLINK).advice.contains("other names"))
        #expect(IOError(operation: "open", path: "s/x", code: ENXIO).advice.contains("not a regular file"))
    }
}
