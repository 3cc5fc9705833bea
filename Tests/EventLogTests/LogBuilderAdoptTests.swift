@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// ``LogBuilder/adopt(blockFileAt:sourceFileSystem:accepting:)`` (FORMAT.md, "Taking another
/// copy's block file whole"): a block file of another copy of the log is taken byte for byte
/// only when it is the next one of this very log, whole and rehashing; otherwise nothing of it
/// stays and the builder goes on as before.
@Suite struct LogBuilderAdoptTests {
    /// A log of 40 events in two block files (1–20, 21–40), and its identity and block files.
    func source(_ folder: TemporaryFolder, _ name: String) throws -> (LogIdentity, [LogReader.BlockFile], [LogEvent]) {
        let log = try EventLog.open(at: folder.sub(name), configuration: configuration())
        for index in 1...40 {
            _ = try log.append(syntheticPayload(UInt64(index)))
            if index == 20 || index == 40 { _ = try log.compact() }
        }
        try log.close()
        let reader = try LogReader(directory: folder.sub(name))
        var events: [LogEvent] = []
        let cursor = try reader.events()
        while let event = try cursor.next() { events.append(event) }
        return (try #require(try reader.identity()), try reader.blockFiles(), events)
    }

    @Test func onlyTheNextFileOfThisLogWholeIsTakenAndARefusalLeavesNothing() throws {
        let folder = TemporaryFolder.made("adopt")
        let (identity, files, events) = try source(folder, "phone")
        try #require(files.map(\.firstSequence) == [1, 21])
        let (_, otherFiles, _) = try source(folder, "other")

        var builder = try LogBuilder(directory: folder.sub("copy"), identity: identity, configuration: configuration())
        // Not the next file, and another log's first file: refused, nothing left behind.
        #expect(throws: LogError.self) { try builder.adopt(blockFileAt: files[1].path) { _ in true } }
        #expect(throws: LogError.self) { try builder.adopt(blockFileAt: otherFiles[0].path) { _ in true } }
        // A damaged copy of the right file: refused too.
        var damaged = try #require(FileManager.default.contents(atPath: files[0].path))
        damaged[damaged.count - 20] ^= 0x04
        _ = FileManager.default.createFile(atPath: folder.sub("damaged.blk"), contents: damaged)
        #expect(throws: LogError.self) { try builder.adopt(blockFileAt: folder.sub("damaged.blk")) { _ in true } }
        // The right file, declined by the caller after seeing its events.
        var seen: [LogEvent] = []
        let declined = try builder.adopt(blockFileAt: files[0].path) { seen = $0; return false }
        #expect(!declined && seen == Array(events[0..<20]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.sub("copy")).isEmpty, "no file of a refusal stays")
        #expect(builder.nextSequence == 1)

        // Then the events of the first file one by one, and the second file whole.
        for event in events[0..<20] { try builder.add(event) }
        #expect(try builder.adopt(blockFileAt: files[1].path) { _ in true })
        #expect(builder.nextSequence == 41)
        let head = try builder.finish()
        let reader = try LogReader(directory: folder.sub("copy"))
        #expect(head == (try reader.head(at: 40)))
        #expect(head == (try LogReader(directory: folder.sub("phone")).head(at: 40)))
        #expect(FileManager.default.contents(atPath: folder.sub("copy") + "/00000000000000000021.blk") == FileManager.default.contents(atPath: files[1].path))
        #expect(try LogVerifier.verify(directory: folder.sub("copy")).isClean)
    }
}
