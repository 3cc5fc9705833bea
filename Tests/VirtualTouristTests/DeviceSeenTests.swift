import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// What a device had seen of the others (docs/DEVICES.md, "What an event carries for the
/// merge"): a device's first record after its copy of another device grew begins with a
/// `DeviceSeen` naming how far and the head there, once; a sync alone appends nothing; and
/// `vt verify` checks each one against the copy it names.
@Suite struct DeviceSeenTests {
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    /// This device's own log, decoded.
    func ownEvents(_ store: String) throws -> [DomainEvent] {
        let reader = try LogReader(directory: store + "/log", payloadCodec: EventCodec.blockCodec)
        let cursor = try reader.events(from: 1)
        var events: [DomainEvent] = []
        while let event = try cursor.next() { events.append(try EventCodec.decode(event).event) }
        return events
    }

    func head(of log: String, at sequence: UInt64) throws -> [UInt8] {
        try #require(try LogReader(directory: log, payloadCodec: EventCodec.blockCodec).head(at: sequence)).hash.bytes
    }

    @Test func aDevicesFirstRecordAfterItsCopyGrewSaysHowFarItHadSeenOnce() async throws {
        let folder = TemporaryFolder.made("device-seen")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: paris)
        _ = try await phone.requestAlbum(for: pin, perPage: 2)
        try await phone.close()
        let cloned = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        #expect(try ownEvents(folder.sub("laptop")).isEmpty, "a clone writes nothing of its own")

        var laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        let dropped = try await laptop.dropPin(at: rome)
        try await laptop.dragPin(dropped, to: paris)
        let phoneHead = try head(of: folder.sub("phone") + "/log", at: 2)
        let said = DomainEvent.deviceSeen(DeviceSeen(device: cloned.map, through: 2, head: phoneHead))
        #expect(try ownEvents(folder.sub("laptop")) == [said, .pinDropped(dropped, rome), .pinDragged(dropped, paris)])
        #expect(laptop.state.devicesSeen == [cloned.device: [cloned.map: 2]])
        try await laptop.close()
        // Reopened from its snapshot, it knows it said so: nothing is said twice.
        laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        #expect(laptop.report.snapshot != nil)
        try await laptop.dragPin(dropped, to: rome)
        try await laptop.close()
        #expect(try ownEvents(folder.sub("laptop")).count == 4)

        // The phone moves on; a sync both ways appends nothing to either device's own log.
        let onPhone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await onPhone.dragPin(pin, to: rome)
        try await onPhone.close()
        _ = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        #expect(try ownEvents(folder.sub("laptop")).count == 4 && ownEvents(folder.sub("phone")).count == 3)

        // Each one's next record begins with what it now has of the other.
        for (name, other, through) in [("laptop", "phone", UInt64(3)), ("phone", "laptop", UInt64(4))] {
            let store = try await TouristStore.open(at: folder.sub(name), options: deviceOptions(clock))
            let otherDevice = try StoreSync.devices(of: folder.sub(other)).this.device
            try await store.dragPin(pin, to: paris)
            let own = try ownEvents(folder.sub(name))
            let expected = DeviceSeen(device: otherDevice, through: through, head: try head(of: folder.sub(other) + "/log", at: through))
            #expect(Array(own.suffix(2)) == [.deviceSeen(expected), .pinDragged(pin, paris)], "\(name)")
            try await store.close()
        }
        for name in ["phone", "laptop"] {
            let verification = try StoreAudit.verify(folder: folder.sub(name), checkPhotoContents: true)
            #expect(verification.problems.isEmpty, "\(name): \(verification.problems)")
            let checked = verification.notes.filter { $0.contains("DeviceSeen") }
            #expect(checked.count == 1 && checked[0].hasPrefix("2 of 2 DeviceSeen events checked"), "\(name): \(verification.notes)")
        }
    }

    @Test func verifyNamesADeviceSeenThatTheCopyItNamesDoesNotBearOut() async throws {
        let folder = TemporaryFolder.made("device-seen-wrong")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        _ = try await phone.dropPin(at: paris)
        try await phone.close()
        let cloned = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        // Its own device is refused as the rules refuse any action: nothing appended.
        let own = DeviceSeen(device: cloned.device, through: 1, head: [UInt8](repeating: 7, count: 32))
        await #expect { try await laptop.record(.deviceSeen(own)) } throws: {
            ($0 as? DomainError)?.message.contains("has seen its own log") == true
        }
        #expect(try ownEvents(folder.sub("laptop")).isEmpty)
        // Another head than the phone's log has at 1, and an event the store does not hold yet.
        _ = try await laptop.record(.deviceSeen(DeviceSeen(device: cloned.map, through: 1, head: [UInt8](repeating: 7, count: 32))))
        _ = try await laptop.record(.deviceSeen(DeviceSeen(device: cloned.map, through: 9, head: [UInt8](repeating: 7, count: 32))))
        try await laptop.close()
        #expect(try ownEvents(folder.sub("laptop")).count == 3, "the store's own DeviceSeen, then the two recorded")

        let verification = try StoreAudit.verify(folder: folder.sub("laptop"), checkPhotoContents: true)
        #expect(verification.problems.count == 1, "\(verification.problems)")
        #expect(verification.problems.first?.contains("event 2 (DeviceSeen of device \(cloned.map.short) through 1) names another head") == true)
        #expect(verification.notes.contains { $0.hasPrefix("2 of 3 DeviceSeen events checked") && $0.hasSuffix("1 name events this store does not hold yet") })
    }
}
