import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// `vt verify` (``StoreAudit``) compares the pin summaries beside the log's block files with the
/// pins their events name, since a pin's history trusts them; `vt repair` removes one that
/// disagrees, and the history reads every block again until it is rebuilt.
@Suite struct KeySummaryAuditTests {
    @Test func aForgedPinSummaryIsFoundAndRepairedAndThePinsHistoryIsWholeAgain() async throws {
        let folder = TemporaryFolder("key-audit")
        let story = try await compactedStore(in: folder, seed: 57, count: 1_500)
        #expect(try StoreAudit.verify(folder: folder.path, checkPhotoContents: false).isClean)

        // Leave the first pin of the first block's entry out, its checksums remade.
        let logPath = folder.path + "/log"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: logPath).filter { $0.hasSuffix(".keys") }.sorted().first)
        let path = logPath + "/" + name
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let count = Int(good[88]) | Int(good[89]) << 8 | Int(good[90]) << 16 | Int(good[91]) << 24
        #expect(count >= 1)
        let key = (0..<8).reduce(UInt64(0)) { $0 | UInt64(good[92 + $1]) << (8 * UInt64($1)) }
        var forged = Array(good[..<88]) + withUnsafeBytes(of: UInt32(count - 1).littleEndian, Array.init) + Array(good[100..<(good.count - 4)])
        forged += withUnsafeBytes(of: CRC32C.checksum(Array(forged[80...])).littleEndian, Array.init)
        try Data(forged).write(to: URL(fileURLWithPath: path))
        let pin = PinID(key)
        let expected = story.events.filter { $0.event.pin == pin }.map(\.sequence)
        #expect(try StoreReader.open(at: folder.path).history(of: pin).map(\.sequence) != expected, "the forged summary hides events")

        let audit = try StoreAudit.verify(folder: folder.path, checkPhotoContents: false)
        #expect(!audit.isClean)
        #expect(audit.problems.count == 1, "\(audit.problems)")
        #expect(audit.problems.first?.contains("\(name)") == true && audit.problems.first?.contains("leaves out key \(PinID(key))") == true, "\(audit.problems)")
        #expect(audit.replayedEvents == audit.log.events && audit.log.eventsAreIntact, "the events are intact: all replayed")

        let plan = try LogRepair.plan(directory: logPath, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
        #expect(plan.damage == nil && plan.keySummaries == [path])
        try LogRepair.execute(plan, keys: EventCodec.pinKeys, payloadCodec: EventCodec.blockCodec)
        #expect(try StoreAudit.verify(folder: folder.path, checkPhotoContents: false).isClean)
        #expect(try StoreReader.open(at: folder.path).history(of: pin).map(\.sequence) == expected)
    }
}
