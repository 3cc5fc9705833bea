import DeviceLogs
import EventLog
import FileIO
import Foundation
import HistoryProofs
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Signed heads at sync (docs/PROOFS.md, "Signed heads at sync"): each sync signs the device's
/// own head, carries it, and checks the heads a store saw against every log it takes; a history
/// its device re-signed after rewriting it, a head of another key and a damaged head are refused,
/// named, and take nothing.
@Suite struct DeviceSignedHeadTests {
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    /// A phone with four pins, a laptop cloned from it, and a sync run on the phone: the laptop
    /// keeps the phone's signed head. Returns the phone's device id.
    func phoneSyncedIntoItsLaptop(_ folder: TemporaryFolder) async throws -> DeviceID {
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        _ = try await phone.dropPin(at: paris)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        let again = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        for step in 1...3 { _ = try await again.dropPin(at: Coordinate(latitude: 10 + Double(step), longitude: 20)) }
        try await again.close()
        let id = try StoreSync.devices(of: folder.sub("phone")).this.device
        let report = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        #expect(report.refused.isEmpty && report.notSigned == nil)
        return id
    }

    func headOfCopy(_ folder: TemporaryFolder, _ store: String, _ device: DeviceID) throws -> SignedHead? {
        try SignedHead.read(at: folder.sub(store) + "/devices/\(device)/" + SignedHead.fileName)
    }

    func copyHead(_ folder: TemporaryFolder, _ store: String, _ device: DeviceID) throws -> LogHead {
        let reader = try LogReader(directory: StoreDevices.logPath(store: folder.sub(store), device: device), payloadCodec: EventCodec.blockCodec)
        return try #require(try reader.head(at: try reader.lastSequence()))
    }

    /// A copy of the phone's folder whose log has event `rewritten` replaced by the payload of
    /// event `with`, re-chained from there on: the same device, another history.
    func forgedPhone(_ folder: TemporaryFolder, rewriting rewritten: UInt64, with source: UInt64) throws -> String {
        let forged = folder.sub("forged")
        try FileManager.default.copyItem(atPath: folder.sub("phone"), toPath: forged)
        let log = forged + "/log"
        let reader = try LogReader(directory: log, payloadCodec: EventCodec.blockCodec)
        let identity = try #require(try reader.identity())
        var events: [LogEvent] = []
        let cursor = try reader.events(from: 1, through: try reader.lastSequence())
        while let event = try cursor.next() { events.append(event) }
        let replacement = events[Int(source) - 1].payload
        try FileManager.default.removeItem(atPath: log)
        var builder = try LogBuilder(directory: log, identity: identity, configuration: deviceOptions(TestClock(0)).log)
        for event in events {
            let payload = event.sequence == rewritten ? replacement : event.payload
            try builder.add(LogEvent(sequence: event.sequence, timestamp: event.timestamp, payload: payload))
        }
        _ = try builder.finish()
        try? FileManager.default.removeItem(atPath: forged + "/" + SignedHead.fileName)
        return forged
    }

    @Test func eachSyncSignsTheDevicesHeadAndTheOtherStoreKeepsIt() async throws {
        let folder = TemporaryFolder.made("signed-heads")
        let phone = try await phoneSyncedIntoItsLaptop(folder)
        let signed = try #require(try SignedHead.read(at: folder.sub("phone") + "/" + SignedHead.fileName))
        #expect(signed.verify() && signed.logID == phone.bytes)
        let kept = try #require(try headOfCopy(folder, "laptop", phone))
        #expect(kept == signed, "the laptop keeps the head the phone signed")
        // The head is of the whole log, and its root is the tree of the laptop's copy.
        let copy = try LogReader(directory: StoreDevices.logPath(store: folder.sub("laptop"), device: phone), payloadCodec: EventCodec.blockCodec)
        #expect(kept.treeSize == (try copy.lastSequence()) && kept.treeSize == 4)
        #expect(try LogTree(reader: copy).root() == kept.root)
        // The phone's key signed it, and it is the key in the phone's folder.
        #expect(kept.publicKey == (try SigningKey.loadOrCreate(store: folder.sub("phone"))).publicKey)

        // A sync run on the laptop signs the laptop's head, which the phone keeps in turn.
        let laptop = try StoreSync.devices(of: folder.sub("laptop")).this.device
        let back = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        #expect(back.refused.isEmpty)
        // The clone has no event of its own yet: it has nothing to sign.
        #expect(back.signedHead == nil)
        #expect(try headOfCopy(folder, "phone", laptop) == nil)
    }

    @Test func aHistoryItsDeviceRewroteAndSignedAgainIsRefusedAndNothingOfItIsTaken() async throws {
        let folder = TemporaryFolder.made("signed-heads-rewritten")
        let phone = try await phoneSyncedIntoItsLaptop(folder)
        let before = try copyHead(folder, "laptop", phone)
        let keptBefore = try #require(try headOfCopy(folder, "laptop", phone))

        // The phone's key, its log with event 2 rewritten and re-chained, signed anew.
        let forged = try forgedPhone(folder, rewriting: 2, with: 3)
        let map = try StoreSync.devices(of: forged).this.map
        let resigned = try #require(try StoreSync.signOwnHead(of: forged, map: map, PosixFileSystem()))
        #expect(resigned.verify() && resigned.publicKey == keptBefore.publicKey && resigned.treeSize == 4 && resigned.root != keptBefore.root)

        let report = try StoreSync.sync(store: folder.sub("laptop"), with: forged)
        let refusal = try #require(report.refused.first { $0.contains("device \(phone)") })
        #expect(refusal.contains("not the history its key signed") && refusal.contains("the head this store saw before"), "\(refusal)")
        #expect(report.taken.allSatisfy { $0.device != phone })
        #expect(try copyHead(folder, "laptop", phone) == before, "nothing of the rewritten log was taken")
        #expect(try headOfCopy(folder, "laptop", phone) == keptBefore, "the head seen before is kept")
    }

    @Test func aRewrittenHistoryOfferedWithTheOldHeadIsRefusedByThatHead() async throws {
        let folder = TemporaryFolder.made("signed-heads-old-head")
        let phone = try await phoneSyncedIntoItsLaptop(folder)
        // A third device that never had the phone's log takes it from a folder whose log was
        // rewritten by someone without the phone's key, carrying the phone's genuine head.
        _ = try StoreSync.clone(from: folder.sub("laptop"), to: folder.sub("tablet"), name: "tablet", options: deviceOptions(TestClock(1)))
        let tablet = folder.sub("tablet")
        try FileManager.default.removeItem(atPath: StoreDevices.folder(store: tablet, device: phone))
        let genuine = try #require(try SignedHead.read(at: folder.sub("phone") + "/" + SignedHead.fileName))
        let forged = try forgedPhone(folder, rewriting: 4, with: 3)
        try genuine.write(to: forged + "/" + SignedHead.fileName)

        let report = try StoreSync.sync(store: tablet, with: forged)
        let refusal = try #require(report.refused.first { $0.contains("device \(phone)") })
        #expect(refusal.contains("the head it came with"), "\(refusal)")
        #expect(!FileManager.default.fileExists(atPath: StoreDevices.logPath(store: tablet, device: phone)))
    }

    @Test func aHeadOfAnotherKeyOrDamagedOrForgedIsRefusedUntilThePersonTrustsTheNewKey() async throws {
        let folder = TemporaryFolder.made("signed-heads-key")
        let phone = try await phoneSyncedIntoItsLaptop(folder)
        let phoneFolder = folder.sub("phone")
        let headPath = phoneFolder + "/" + SignedHead.fileName
        let genuine = try #require(try SignedHead.read(at: headPath))
        let before = try copyHead(folder, "laptop", phone)

        // The phone's key replaced: one more pin, signed with the new key.
        try FileManager.default.removeItem(atPath: phoneFolder + "/" + SigningKey.fileName)
        let store = try await TouristStore.open(at: phoneFolder, options: deviceOptions(TestClock(1_900_000_000_000_000)))
        _ = try await store.dropPin(at: rome)
        try await store.close()
        let map = try StoreSync.devices(of: phoneFolder).this.map
        let renewed = try #require(try StoreSync.signOwnHead(of: phoneFolder, map: map, PosixFileSystem()))
        #expect(renewed.publicKey != genuine.publicKey && renewed.treeSize == 5)

        var report = try StoreSync.sync(store: folder.sub("laptop"), with: phoneFolder)
        #expect(report.refused.contains { $0.contains("not with the key") && $0.contains(SignedHead.fileName) }, "\(report.refused)")
        #expect(try copyHead(folder, "laptop", phone) == before)

        // A signature that is not the key's (a byte of it changed, the CRC made to match).
        var forgedSignature = renewed
        forgedSignature.signature[0] ^= 1
        try forgedSignature.write(to: headPath)
        report = try StoreSync.sync(store: folder.sub("laptop"), with: phoneFolder)
        #expect(report.refused.contains { $0.contains("is not signed by the key it names") }, "\(report.refused)")

        // A damaged file: its CRC does not match.
        var bytes = renewed.binary
        bytes[60] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: headPath))
        report = try StoreSync.sync(store: folder.sub("laptop"), with: phoneFolder)
        #expect(report.refused.contains { $0.contains("is damaged") }, "\(report.refused)")
        #expect(try copyHead(folder, "laptop", phone) == before, "nothing was taken while the heads did not hold")

        // The person trusts the new key: the head this store kept is removed, and the log syncs.
        try renewed.write(to: headPath)
        try FileManager.default.removeItem(atPath: folder.sub("laptop") + "/devices/\(phone)/" + SignedHead.fileName)
        report = try StoreSync.sync(store: folder.sub("laptop"), with: phoneFolder)
        #expect(report.refused.isEmpty)
        #expect(try copyHead(folder, "laptop", phone).sequence == 5)
        #expect(try headOfCopy(folder, "laptop", phone) == renewed)
    }
}
