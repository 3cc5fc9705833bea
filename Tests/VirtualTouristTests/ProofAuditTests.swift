import EventLog
import FileIO
import Foundation
import HistoryProofs
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// `vt verify` reads the proofs' roots files (docs/PROOFS.md, "The roots file"): a kept chunk
/// root that is not the log's is a problem, named with its events; a clean file is counted.
@Suite(.heavy) struct ProofAuditTests {
    @Test func verifyComparesEachKeptChunkRootWithTheLog() async throws {
        let folder = TemporaryFolder("proof-audit")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        for index in 0..<4_200 { _ = try await store.dropPin(at: Coordinate(latitude: Double(index % 80), longitude: Double(index / 80))) }
        try await store.close()
        var verified = try StoreAudit.verify(folder: folder.path, checkPhotoContents: false)
        #expect(verified.isClean && verified.proofChunksChecked == 0, "no roots file yet")

        let reader = try LogReader(directory: folder.path + "/log", payloadCodec: EventCodec.blockCodec)
        let logID = try #require(try reader.identity()).logID
        let rootsFile = StoreSync.rootsFile(in: folder.path, of: logID)
        _ = try LogTree(reader: reader, rootsFile: rootsFile).root()
        verified = try StoreAudit.verify(folder: folder.path, checkPhotoContents: false)
        #expect(verified.isClean && verified.proofChunksChecked == 1, "\(verified.problems)")

        // The chunk's root changed, its CRC made to match: only the comparison with the log finds it.
        var bytes = Array(try #require(FileManager.default.contents(atPath: rootsFile)))
        bytes[25] ^= 1
        var crc = CRC32C()
        crc.update([UInt8](repeating: 0, count: 8) + Array(bytes[25..<57]))
        withUnsafeBytes(of: crc.value.littleEndian) { bytes.replaceSubrange(57..<61, with: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: rootsFile))
        verified = try StoreAudit.verify(folder: folder.path, checkPhotoContents: false)
        #expect(verified.problems.count == 1)
        #expect(verified.problems.first?.contains("events 1…4096 is not the log's") == true, "\(verified.problems)")

        // A roots file of a log the store does not hold is only a note.
        try FileManager.default.removeItem(atPath: rootsFile)
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/proofs/" + String(repeating: "ab", count: 16) + ".roots"))
        verified = try StoreAudit.verify(folder: folder.path, checkPhotoContents: false)
        #expect(verified.isClean && verified.notes.contains { $0.contains("does not hold") })
    }
}
