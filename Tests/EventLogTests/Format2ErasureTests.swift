import Crypto
@testable import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

/// Erasure (FORMAT.md, "Erasure: rewriting block files"): the chosen payloads leave every file,
/// each erased event keeps its sequence, time, digest and kept bytes, every head hash stays, and
/// the log verifies, reads and appends on afterwards.
@Suite struct Format2ErasureTests {
    static func logBytes(_ path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() where name.hasSuffix(".blk") {
            bytes += try readBytes(path + "/" + name)
        }
        return bytes
    }

    @Test(arguments: [LogFormat.Layout.rows, .columns])
    func erasedPayloadsLeaveTheLogWhileEveryHeadStays(_ layout: LogFormat.Layout) throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        var configuration = Format2LogTests.format2(clock: clock, segmentSize: 4096)
        configuration.blockLayout = layout
        configuration.blockSize = 2048
        configuration.blockCompressionLevel = 1
        let log = try EventLog.open(at: folder.path, configuration: configuration)
        // Some events compacted already, some still in sealed and active hot-tail segments.
        var appended = try Format2LogTests.fill(log, clock: clock, commits: 150)
        try log.compact()
        appended += try Format2LogTests.fill(log, clock: clock, commits: 60, from: 150)
        // A distinctive payload to look for afterwards, plain and compressed.
        let secret = Array("erase-me-41.40338,2.17403".utf8) + [UInt8](repeating: 0x5A, count: 40)
        let secretSequence = try log.append(secret)
        appended.append((clock.now().microsecondsSinceEpoch, secret))
        appended += try Format2LogTests.fill(log, clock: clock, commits: 10, from: 210)
        let headsBefore = try (1...UInt64(appended.count)).map { try LogReader(directory: folder.path).head(at: $0) }

        var targets: [UInt64: [UInt8]] = [secretSequence: [7]]
        for sequence in stride(from: UInt64(3), to: UInt64(appended.count), by: 37) { targets[sequence] = [] }
        let report = try log.erase(targets)
        #expect(report.erased == UInt64(targets.count))
        #expect(report.alreadyErased == 0)
        #expect(report.filesRewritten >= 2)
        #expect(report.compaction.events > 0)

        let events = try readAll(folder.path)
        #expect(events.count == appended.count)
        for (index, event) in events.enumerated() {
            let sequence = UInt64(index + 1)
            #expect(event.timestamp.microsecondsSinceEpoch == appended[index].time)
            if let kept = targets[sequence] {
                #expect(event.isErased)
                #expect(Array(event.erasedDigest!) == Array(SHA256.hash(data: appended[index].payload)))
                #expect(Array(event.keptBytes!) == kept)
            } else {
                #expect(!event.isErased && Array(event.payload) == appended[index].payload, "event \(sequence)")
            }
        }
        let reader = try LogReader(directory: folder.path)
        for sequence in 1...UInt64(appended.count) {
            #expect(try reader.head(at: sequence) == headsBefore[Int(sequence) - 1], "head at \(sequence)")
        }
        let verification = try LogVerifier.verify(directory: folder.path)
        #expect(verification.problems.isEmpty)
        #expect(verification.erasedEvents == targets.count)
        #expect(verification.headHash == headsBefore.last!!.hash)

        // Not in the bytes: neither plain nor in any zstd frame of any block.
        let bytes = try Self.logBytes(folder.path)
        #expect(!bytes.contains(subsequence: secret))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().filter { $0.hasSuffix(".blk") }
        for name in names {
            let file = try readBytes(folder.sub(name))
            let header = try IndependentFormat2.blockFileHeader(file)
            var offset = IndependentFormat2.blockFileHeaderSize
            for _ in 0..<header.blockCount {
                let block = try IndependentFormat2.block(file, at: offset)
                #expect(!block.raw.contains(subsequence: secret), "\(name), block at \(offset)")
                offset = block.end
            }
        }

        // Erasing again changes nothing and says so; appends go on; reopening is clean.
        let again = try log.erase([secretSequence: [9]])
        #expect(again.erased == 0 && again.alreadyErased == 1 && again.filesRewritten == 0)
        #expect(try LogReader(directory: folder.path).event(at: secretSequence)?.keptBytes.map(Array.init) == [7])
        appended += try Format2LogTests.fill(log, clock: clock, commits: 5, from: 220)
        try log.close()
        let reopened = try EventLog.open(at: folder.path, configuration: configuration)
        #expect(reopened.recovery.isClean)
        #expect(reopened.lastSequence == UInt64(appended.count))
        try reopened.close()
    }

    @Test func badRequestsAreRefusedAndChangeNothing() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2(clock: clock))
        try Format2LogTests.fill(log, clock: clock, commits: 20)
        let before = try snapshot(folder.path)
        expectLogError(.invalidArgument) { try log.erase([0: []]) }
        expectLogError(.invalidArgument) { try log.erase([log.lastSequence + 1: []]) }
        expectLogError(.invalidArgument) { try log.erase([1: [UInt8](repeating: 1, count: LogFormat.maxErasedKept + 1)]) }
        #expect(try snapshot(folder.path) == before)
        try log.close()

        let format1 = TemporaryFolder.made()
        let old = try EventLog.open(at: format1.path, configuration: legacyConfiguration(clock: clock))
        try old.append([1, 2, 3])
        let error = expectLogError(.invalidArgument) { try old.erase([1: []]) }
        #expect(error?.message.contains("upgrade") == true)
        try old.close()
    }

    @Test func quarantinedBytesAreRemoved() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2(clock: clock))
        try Format2LogTests.fill(log, clock: clock, commits: 20)
        let quarantine = folder.sub("quarantine")
        try FileManager.default.createDirectory(atPath: quarantine, withIntermediateDirectories: true)
        try writeBytes(Array("a torn tail holding a payload".utf8), to: quarantine + "/00000000000000000001.seg-99.torn")
        let report = try log.erase([2: []])
        #expect(report.quarantinedFilesRemoved == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: quarantine).isEmpty)
        try log.close()
    }

    /// A failure while writing the new file leaves the old one in place, whole, and the erase
    /// can be run again.
    @Test func aFailedRewriteLeavesTheOldFileAndCanBeRunAgain() throws {
        let folder = TemporaryFolder.made()
        let clock = TestClock()
        let disk = InstrumentedFileSystem()
        let log = try EventLog.open(at: folder.path, configuration: Format2LogTests.format2(clock: clock), fileSystem: disk)
        let appended = try Format2LogTests.fill(log, clock: clock, commits: 40)
        try log.compact()
        let before = try readAll(folder.path)
        disk.failure = { operation, path, _ in operation == "write" && path.hasSuffix(".blk.tmp") ? EIO : nil }
        #expect(throws: LogError.self) { try log.erase([5: []]) }
        #expect(try readAll(folder.path) == before)
        #expect(try !FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasSuffix(".tmp") })
        disk.failure = nil
        #expect(try log.erase([5: []]).erased == 1)
        #expect(try readAll(folder.path)[4].isErased)
        #expect(try readAll(folder.path).count == appended.count)
        try log.close()
    }
}
