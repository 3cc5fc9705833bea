import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// A reader's listings of its directory read each block file's header once: its later lookups
/// (the last sequence, the log's identity, a cursor's files) look at the files and take the
/// headers already read, unless a file under the same name is another file now.
@Suite struct ListingHeaderTests {
    /// Three block files and a hot tail; every log made here has the same events at the same
    /// times, so its files differ from another's only by the log id.
    static func makeLog(_ path: String) throws {
        var configuration = LogConfiguration()
        configuration.compactsInBackground = false
        configuration.clock = TestClock(stepPerReading: 1_000)
        let log = try EventLog.open(at: path, configuration: configuration)
        for batch in 0..<4 {
            _ = try log.append(contentsOf: (0..<300).map { Array("event \(batch)-\($0)".utf8) })
            if batch < 3 { _ = try log.compact() }
        }
        try log.close()
    }

    /// Sets the files' modification times a minute back, to the nanosecond.
    static func age(_ paths: [String]) throws {
        let files = PosixFileSystem()
        for path in paths {
            let status = try #require(try files.status(path))
            try files.setModificationTime(path, to: status.modificationTime - .seconds(60))
        }
    }

    @Test func laterLookupsOpenNoBlockFileForItsHeader() throws {
        let folder = TemporaryFolder.made()
        let path = folder.path + "/log"
        try Self.makeLog(path)
        let blockFiles = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".blk") }
        #expect(blockFiles.count == 3)
        // Files written a while ago: one modified within the last second is read each time.
        try Self.age(blockFiles.map { path + "/" + $0 })

        let fileSystem = InstrumentedFileSystem()
        let reader = try LogReader(directory: path, fileSystem: fileSystem)
        #expect(try reader.lastSequence() == 1_200)
        let opened = fileSystem.count("open", "blk")
        #expect(opened == 3, "the first listing reads each header")
        for _ in 0..<3 {
            #expect(try reader.lastSequence() == 1_200)
            #expect(try reader.identity() != nil)
        }
        #expect(fileSystem.count("open", "blk") == opened, "no header read again")
        // A cursor from event 650 lists the files again and opens only the one it reads.
        let cursor = try reader.events(from: 650, through: 700)
        var sequences: [UInt64] = []
        while let event = try cursor.next() { sequences.append(event.sequence) }
        #expect(sequences == Array(650...700))
        #expect(fileSystem.count("open", "blk") == opened + 1)
    }

    @Test func aBlockFileReplacedUnderItsNameIsReadAgain() throws {
        let folder = TemporaryFolder.made()
        let path = folder.path + "/log", other = folder.path + "/other"
        try Self.makeLog(path)
        try Self.makeLog(other)
        let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".blk") }.sorted()
        try Self.age(names.map { path + "/" + $0 })
        let reader = try LogReader(directory: path)
        #expect(try reader.lastSequence() == 1_200)
        let name = try #require(names.last)

        // Another log's file of the same events, of the same size, given the same modification
        // time, and renamed into place as a writer would: its header names another log, which
        // the next lookup must see.
        let swap = path + "/" + name + ".swap"
        try FileManager.default.copyItem(atPath: other + "/" + name, toPath: swap)
        let files = PosixFileSystem()
        let original = try #require(try files.status(path + "/" + name))
        try files.setModificationTime(swap, to: original.modificationTime)
        let copy = try #require(try files.status(swap))
        #expect(copy.size == original.size && copy.modificationTime == original.modificationTime && copy.inode != original.inode)
        #expect(rename(swap, path + "/" + name) == 0)
        #expect {
            _ = try reader.lastSequence()
        } throws: { error in
            (error as? LogError)?.code == .corrupt && (error as? LogError)?.message.contains("belongs to another log") == true
        }
    }
}
