import DeviceLogs
import EventLog
import Foundation
import HistoryProofs
import Proofs
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Erasure receipts (docs/PROOFS.md, "Erasure receipts"): a forget proves each event it erased
/// in the history signed before it, and that the history before it is unchanged; a receipt
/// changed in any part is refused, also when signed again with the device's key.
@Suite struct ErasureReceiptTests {
    let place = Coordinate(latitude: 12.3456789, longitude: -65.4321987)
    let elsewhere = Coordinate(latitude: 48.8584, longitude: 2.2945)

    func receipt(of report: ForgetReport) throws -> ErasureReceipt {
        let path = try #require(report.receipt, "\(report.receiptProblem ?? "no receipt")")
        return try ErasureReceipt.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))), place: path)
    }

    func events(of log: String) throws -> [LogEvent] {
        let reader = try LogReader(directory: log, payloadCodec: EventCodec.blockCodec)
        let cursor = try reader.events(from: 1, through: try reader.lastSequence())
        var events: [LogEvent] = []
        while let event = try cursor.next() { events.append(event) }
        return events
    }

    @Test func aReceiptProvesEachErasedEventInTheHistorySignedBeforeTheForget() async throws {
        let folder = TemporaryFolder("receipt")
        var options = storeOptions(snapshotInterval: 4)
        options.log.compactsInBackground = false
        let store = try await TouristStore.open(at: folder.path, options: options)
        let helper = ForgetTests()
        _ = try await helper.album(store, at: elsewhere, count: 2, url: "https://keep.example/", title: "Eiffel", bytes: { fakePhoto(UInt64(900 + $0)) })
        let pin = try await helper.album(store, at: place, count: 3, url: ForgetTests.secretURL, title: ForgetTests.secretTitle, bytes: ForgetTests.secretPhoto)
        _ = try await store.writeSnapshot()
        try store.compactLog()
        _ = try await store.dragPin(pin, to: Coordinate(latitude: 12.35, longitude: -65.44))
        let last = store.lastSequence
        let rootBefore = try LogTree(reader: try LogReader(directory: folder.path + "/log", payloadCodec: EventCodec.blockCodec)).root()

        let report = try await store.forget(pin)
        try await store.close()
        let receipt = try receipt(of: report)
        #expect(receipt.problems().isEmpty, "\(receipt.problems())")
        #expect(receipt.pin == pin.description && receipt.before.treeSize == last && receipt.after.treeSize == report.sequence)
        #expect(receipt.before.root == rootBefore, "the head before is the history as it was before the forget")
        #expect(receipt.publicKey == (try SigningKey.loadOrCreate(store: folder.path)).publicKey)
        #expect(report.receipt?.hasPrefix(folder.path + "/receipts/") == true)

        // The proofs are of exactly the events the log now holds erased, with their leaves.
        let log = try events(of: folder.path + "/log")
        let erased = log.filter(\.isErased)
        #expect(receipt.erased.map(\.logID) == Array(repeating: receipt.before.logID, count: erased.count))
        var proved: [UInt64] = []
        for proof in receipt.erased {
            guard case .inclusion(let sequence, let leaf, _) = proof.claim else { continue }
            proved.append(sequence)
            #expect(leaf == LogTree.leaf(of: log[Int(sequence) - 1]), "leaf of event \(sequence)")
        }
        #expect(proved == erased.map(\.sequence) && UInt64(proved.count) == report.erasedEvents)
        #expect(receipt.removed.photos == 3 && receipt.removed.photos == report.photosDeleted)
        #expect(receipt.removed.snapshotsRewritten == report.snapshotsRewritten && receipt.removed.events == report.erasedEvents)
        // The receipt names none of the place: ForgetTests searches every file of a store for it.
        let text = try String(contentsOfFile: report.receipt!, encoding: .utf8)
        #expect(!text.contains("12.345") && !text.contains("forget-me.example") && !text.contains("SECRET"))
    }

    @Test func aReceiptChangedInAnyPartIsRefusedEvenWhenSignedAgain() async throws {
        let folder = TemporaryFolder("receipt-changed")
        let store = try await TouristStore.open(at: folder.path, options: storeOptions())
        let pin = try await store.dropPin(at: place)
        _ = try await store.dropPin(at: elsewhere)
        _ = try await store.dragPin(pin, to: Coordinate(latitude: 12.35, longitude: -65.44))
        let report = try await store.forget(pin)
        try await store.close()
        let genuine = try receipt(of: report)
        let key = try SigningKey.loadOrCreate(store: folder.path)
        #expect(genuine.problems().isEmpty && genuine.erased.count == 2)

        func problems(_ change: (inout ErasureReceipt) -> Void, signedAgain: Bool = true) throws -> [String] {
            var changed = genuine
            change(&changed)
            if signedAgain { try changed.sign(with: key) }
            // Through its text, as a checker reads it.
            return try ErasureReceipt.decode(Array(changed.text.utf8), place: "changed").problems()
        }
        let other = TreeHash(Array(repeating: 7, count: 32))!
        #expect(try problems({ $0.pin = "00000000000000ff" }, signedAgain: false).contains { $0.contains("signature is not") })
        #expect(try problems({ $0.erased[0].root = other }).contains { $0.contains("another tree") || $0.contains("does not hold") })
        #expect(try problems({ proof in
            guard case .inclusion(let sequence, let leaf, var inclusion) = proof.erased[1].claim else { return }
            inclusion.path[0] = other
            proof.erased[1].claim = .inclusion(sequence: sequence, leaf: leaf, proof: inclusion)
        }).contains { $0.contains("inclusion proof of event") })
        #expect(try problems({ receipt in
            guard case .consistency(let root, var consistency) = receipt.consistency.claim else { return }
            consistency.path = consistency.path.isEmpty ? [other] : [other] + consistency.path.dropFirst()
            receipt.consistency.claim = .consistency(oldRoot: root, proof: consistency)
        }).contains { $0.contains("consistency proof does not hold") })
        #expect(try problems({ $0.before.root = other }).contains { $0.contains("head before the forget is not signed") })
        #expect(try problems({ $0.removed.events += 1 }).contains { $0.contains("proves 2 erased events and says 3") })
        #expect(try problems({ $0.erased.removeLast() }).contains { $0.contains("proves 1 erased events") })
        // Signed by another key than the heads'.
        let strangerFolder = TemporaryFolder.made("receipt-stranger")
        let stranger = try SigningKey.loadOrCreate(store: strangerFolder.path)
        var foreign = genuine
        try foreign.sign(with: stranger)
        #expect(foreign.problems().contains { $0.contains("signed with another key than the receipt") })

        // Text that is not the receipt's own form is refused before anything is checked.
        let text = genuine.text
        for (name, bad) in [
            ("spacing", text.replacingOccurrences(of: "\"pin\": ", with: "\"pin\":")),
            ("a key more", text.replacingOccurrences(of: "{\"kind\": \"erasure_receipt\", ", with: "{\"kind\": \"erasure_receipt\", \"note\": 1, ")),
            ("one line", String(text.prefix { $0 != "\n" })),
            ("a bad count", text.replacingOccurrences(of: "\"former_log\": false", with: "\"former_log\": 0")),
        ] {
            #expect(throws: ProofError.self, "\(name)") { try ErasureReceipt.decode(Array(bad.utf8), place: name) }
        }
    }

    @Test func aForgetOnSeveralDevicesProvesTheEventsItErasedInACopy() async throws {
        let folder = TemporaryFolder.made("receipt-devices")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: place)
        _ = try await phone.dragPin(pin, to: Coordinate(latitude: 12.35, longitude: -65.44))
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        _ = try await laptop.dragPin(pin, to: Coordinate(latitude: 12.36, longitude: -65.45))
        let report = try await laptop.forget(pin)
        try await laptop.close()

        let receipt = try receipt(of: report)
        #expect(receipt.problems().isEmpty, "\(receipt.problems())")
        let phoneID = try StoreSync.devices(of: folder.sub("phone")).this.device
        let copyLog = StoreDevices.logPath(store: folder.sub("laptop"), device: phoneID)
        let inCopy = receipt.erased.filter { $0.logID == phoneID.bytes }
        let erasedInCopy = try events(of: copyLog).filter(\.isErased).count
        #expect(inCopy.map(\.size) == [2, 2] && inCopy.count == erasedInCopy)
        let copyRoot = try LogTree(reader: try LogReader(directory: copyLog, payloadCodec: EventCodec.blockCodec)).root()
        #expect(inCopy.allSatisfy { $0.root == copyRoot })
        let own = receipt.erased.filter { $0.logID == receipt.before.logID }
        #expect(own.count == 1 && own[0].root == receipt.before.root, "the laptop's own drag, in its history before the forget")
    }
}
