import DemoLog
import EventLog
import FileIO
import Foundation
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// I/O failures reach the caller, leave no partial batch, and never turn into silent loss.
@Suite struct FaultTests {
    @Test func aFailedWriteLeavesNoPartialBatchAndTheLogCarriesOn() throws {
        let directory = TemporaryFolder.made("enospc")
        let fileSystem = InstrumentedFileSystem()
        var settings = configuration(durability: .none)
        settings.preallocationSize = 0
        let log = try EventLog.open(at: directory.path, configuration: settings, fileSystem: fileSystem)
        for sequence in 1...5 as ClosedRange<UInt64> { try log.append(syntheticPayload(sequence)) }
        let segment = try segmentFiles(directory.path)[0]
        let before = try readBytes(segment)

        fileSystem.failure = { operation, path, _ in operation == "write" && path.hasSuffix(".seg") ? ENOSPC : nil }
        let error = expectLogError(.io) { try log.append(contentsOf: (6...9 as ClosedRange<UInt64>).map(syntheticPayload)) }
        #expect((error?.cause as? IOError)?.isOutOfSpace == true)
        #expect(error?.message.contains("the disk is full") == true)
        #expect(try readBytes(segment) == before, "nothing of the failed batch stays")

        // Space is back: the same appends go through, with the next sequence numbers.
        fileSystem.failure = nil
        #expect(try log.append(contentsOf: (6...9 as ClosedRange<UInt64>).map(syntheticPayload)) == 6..<10)
        try log.close()
        #expect(try readAll(directory.path).map(\.sequence) == Array(1...9))
    }

    @Test func aFailedSyncStopsFurtherAppendsUntilTheLogIsReopened() throws {
        let directory = TemporaryFolder.made("eio")
        let fileSystem = InstrumentedFileSystem()
        let log = try EventLog.open(at: directory.path, configuration: configuration(), fileSystem: fileSystem)
        for sequence in 1...3 as ClosedRange<UInt64> { try log.append(syntheticPayload(sequence)) }

        fileSystem.failure = { operation, path, _ in operation == "sync" && path.hasSuffix(".seg") ? EIO : nil }
        let failed = expectLogError(.writerFailed) { try log.append(syntheticPayload(4)) }
        #expect(failed?.message.contains("may or may not be in the log") == true)
        fileSystem.failure = nil
        // The page cache may have dropped the write along with the error: nothing more is
        // accepted on top of an unknown state.
        expectLogError(.writerFailed) { try log.append(syntheticPayload(4)) }
        try log.close()

        let reopened = try EventLog.open(at: directory.path, configuration: configuration())
        let last = reopened.lastSequence
        #expect(last == 3 || last == 4)
        #expect(try reopened.append(syntheticPayload(last + 1)) == last + 1)
        try reopened.close()
        #expect(try readAll(directory.path).allSatisfy { SyntheticEvents.isPayload($0.payload, of: $0.sequence) })
    }

    @Test func aFailedSegmentRollKeepsAppendingToTheCurrentSegment() throws {
        let directory = TemporaryFolder.made("roll")
        let fileSystem = InstrumentedFileSystem()
        var settings = configuration(durability: .none, segmentSize: 4096)
        settings.compactsInBackground = false  // the sealed segments stay, so the rolls can be counted
        let log = try EventLog.open(at: directory.path, configuration: settings, fileSystem: fileSystem)
        var next: UInt64 = 1
        while try log.append(syntheticPayload(next)) > 0, try segmentFiles(directory.path).count < 2 { next += 1 }
        next += 1
        // The next roll cannot create its file.
        fileSystem.failure = { operation, path, _ in operation == "open" && path.hasSuffix(".tmp") ? ENOSPC : nil }
        while try segmentFiles(directory.path).count < 3, next < 1000 {
            do {
                try log.append(syntheticPayload(next))
                next += 1
            } catch let error as LogError {
                #expect(error.code == .io)
                break
            }
        }
        fileSystem.failure = nil
        #expect(try log.append(syntheticPayload(next)) == next)
        try log.close()
        #expect(try readAll(directory.path).map(\.sequence) == Array(1...next))
        #expect(try LogVerifier.verify(directory: directory.path).isClean)
    }
}
