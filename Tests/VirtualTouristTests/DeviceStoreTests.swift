import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// A store of several devices (docs/DEVICES.md): a clone reads the first device's history, writes
/// its own after it, and two folders sync both ways; what is refused is named and changes nothing.
@Suite struct DeviceStoreTests {
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    @Test func aCloneFoldsTheFirstDevicesHistoryAndNumbersItsOwnEventsAfterIt() async throws {
        let folder = TemporaryFolder.made("device-store")
        let phoneClock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(phoneClock))
        let first = try await phone.dropPin(at: paris)
        let request = try await phone.requestAlbum(for: first, perPage: 2)
        try await phone.close()

        // The laptop's clock is an hour behind: its events still come after what it copied.
        let laptopClock = TestClock(1_800_000_000_000_000 - 3_600_000_000, stepPerReading: 10)
        let cloned = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(laptopClock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(laptopClock))
        #expect(laptop.localDevice == cloned.device)
        #expect(laptop.state.pins[first]?.album.phase == .listing && laptop.state.sequence == 2)
        #expect(laptop.state.pins[first]?.album.requestedBy == cloned.map, "the phone asked for the album")
        let second = try await laptop.dropPin(at: rome)
        let dropped = try #require(try laptop.events().last)
        // Its first record begins with what it had seen of the phone (docs/DEVICES.md).
        #expect(dropped.sequence == 4 && dropped.origin == EventOrigin(device: cloned.device, sequence: 2))
        #expect(try laptop.events()[2].event.typeName == "DeviceSeen")
        #expect(dropped.timestamp > request.timestamp, "the hybrid clock orders it after what the laptop had seen")
        // A cause names an event of the same device's log: the laptop's own album request for
        // its pin names its drop by the laptop's number, the phone's events by none.
        let asked = try await laptop.requestAlbum(for: second, perPage: 2, cause: dropped.sequence)
        #expect(asked.cause == 2 && asked.origin?.sequence == 3 && asked.sequence == 5)
        #expect(try laptop.causes(of: 5).map(\.sequence) == [5, 4])
        // Time travel counts in positions of the merged order.
        #expect(try laptop.state(at: 2).pins.keys.sorted() == [first])
        #expect(try laptop.state(at: 4).pins.count == 2)
        #expect(try laptop.history(of: first).map(\.origin?.device) == [cloned.map, cloned.map])
        try await laptop.close()

        // Reopened, the same fold; a reader outside the store sees the same positions.
        let again = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(laptopClock))
        #expect(again.state.sequence == 5 && again.state.pins.count == 2)
        try await again.close()
        let reader = try StoreReader.open(at: folder.sub("laptop"))
        #expect(reader.lastSequence == 5)
        var origins: [String] = []
        try reader.forEachEvent { origins.append("\($0.origin!.device == cloned.device ? "laptop" : "phone")#\($0.origin!.sequence)") }
        #expect(origins == ["phone#1", "phone#2", "laptop#1", "laptop#2", "laptop#3"])
    }

    /// A phone with one pin at Paris, and the laptop cloned from it; returns the pin.
    func phoneWithAPinAndItsClone(_ folder: TemporaryFolder, _ clock: TestClock) async throws -> PinID {
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let pin = try await phone.dropPin(at: paris)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))
        return pin
    }

    @Test func syncGoesBothWaysAndBothDevicesFoldTheSameState() async throws {
        let folder = TemporaryFolder.made("device-sync")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let pin = try await phoneWithAPinAndItsClone(folder, clock)

        // Concurrent drags: the later one wins on both devices.
        let onPhone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await onPhone.dragPin(pin, to: rome)
        try await onPhone.close()
        let onLaptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        let later = Coordinate(latitude: 59.9139, longitude: 10.7522)
        try await onLaptop.dragPin(pin, to: later)
        try await onLaptop.close()

        let report = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        #expect(report.eventsTaken == 1 && report.eventsGiven == 2 && report.refused.isEmpty && report.notGiven == nil)
        let again = try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone"))
        #expect(again.eventsTaken == 0 && again.eventsGiven == 0, "a second sync has nothing to do")
        var states: [TouristState] = []
        for name in ["phone", "laptop"] {
            let store = try await TouristStore.open(at: folder.sub(name), options: deviceOptions(clock))
            var state = store.state
            state.localDevice = nil
            states.append(state)
            try await store.close()
        }
        #expect(states[0] == states[1])
        #expect(states[0].pins[pin]?.coordinate == later)
        // The phone's drag was folded, and the laptop's later one replaced its place.
        let reader = try StoreReader.open(at: folder.sub("phone"))
        let events = try allEvents(reader)
        #expect(events.map(\.event.typeName) == ["PinDropped", "PinDragged", "DeviceSeen", "PinDragged"])
        let replaced = try reader.decidingEvent(for: events[1], verdict: reader.verdict(of: events[1]))
        #expect(replaced?.event.sequence == 4 && replaced?.how == "this later drag from another device replaced its place")
        #expect(try reader.decidingEvent(for: events[3], verdict: reader.verdict(of: events[3])) == nil, "nothing replaced the last drag")
    }

    @Test func syncRefusesAnotherMapAndWritesNothingIntoAStoreHeldByAnotherProgram() async throws {
        let folder = TemporaryFolder.made("device-refusals")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        for name in ["phone", "stranger"] {
            let store = try await TouristStore.open(at: folder.sub(name), options: deviceOptions(clock))
            _ = try await store.dropPin(at: paris)
            try await store.close()
        }
        #expect {
            try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("stranger"))
        } throws: { ($0 as! DomainError).code == .invalidArgument && "\($0)".contains("only devices of one map sync") }
        #expect(!FileManager.default.fileExists(atPath: folder.sub("phone/devices")))
        #expect {
            try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("phone"))
        } throws: { "\($0)".contains("this same device") }

        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: nil, options: deviceOptions(clock))
        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        _ = try await laptop.dropPin(at: rome)
        // The phone is open (its writer holds it): the laptop cannot sync into itself while open,
        // and a sync from the phone's side takes the laptop's events but gives it nothing.
        #expect { try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone")) } throws: {
            ($0 as! DomainError).code == .storage && "\($0)".contains("open in another program")
        }
        let fromPhone = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        #expect(fromPhone.eventsTaken == 2 && fromPhone.notGiven?.contains("open in another program") == true)
        try await laptop.close()
    }

    @Test func aLogThatDoesNotVerifyIsRefusedByNameAndTheOthersStillSync() async throws {
        let folder = TemporaryFolder.made("device-damaged")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        _ = try await phone.dropPin(at: paris)
        try await phone.close()
        for name in ["laptop", "tablet"] {
            _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub(name), name: name, options: deviceOptions(clock))
            let store = try await TouristStore.open(at: folder.sub(name), options: deviceOptions(clock))
            _ = try await store.dropPin(at: rome)
            try await store.close()
        }
        _ = try StoreSync.sync(store: folder.sub("tablet"), with: folder.sub("laptop"))
        // The tablet's copy of the phone's log is tampered with (its hot tail is zstd; a flipped
        // byte is caught as damage), then the phone takes from the tablet.
        let tablet = try StoreSync.devices(of: folder.sub("tablet"))
        let laptopID = try StoreSync.devices(of: folder.sub("laptop")).this.device
        let copy = try #require(tablet.copies.first { $0.id == laptopID })
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: copy.logPath).first { $0.hasSuffix(".blk") })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: copy.logPath + "/" + segment))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: copy.logPath + "/" + segment))

        let report = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("tablet"))
        #expect(report.refused.count == 1 && report.refused[0].contains("device \(laptopID)") && report.refused[0].contains("does not verify"))
        #expect(report.taken.map(\.device) == [tablet.this.device], "the tablet's own log still synced")
        let phoneDevices = try StoreSync.devices(of: folder.sub("phone"))
        #expect(!phoneDevices.copies.contains { $0.id == laptopID }, "nothing of the damaged copy was taken")
        // The tablet itself says which copy is damaged and what to do, rather than fold without it.
        await #expect { try await TouristStore.open(at: folder.sub("tablet"), options: deviceOptions(clock)) } throws: {
            "\($0)".contains("copy of device \(laptopID)'s log") && "\($0)".contains("sync with a device that has it")
        }
    }

    @Test func theFoldsVerdictOnEachEventSaysWhichRuleDecided() async throws {
        let folder = TemporaryFolder.made("device-verdict")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let pin = try await phoneWithAPinAndItsClone(folder, clock)
        // The phone removes the pin; the laptop, not knowing, drags it later and looks at Rome.
        let onPhone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let removal = try await onPhone.removePin(pin)
        try await onPhone.close()
        let onLaptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        try await onLaptop.dragPin(pin, to: rome)
        _ = try await onLaptop.changeRegion(to: MapRegion(center: rome, latitudeSpan: 1, longitudeSpan: 1))
        try await onLaptop.close()
        _ = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))

        let reader = try StoreReader.open(at: folder.sub("phone"))
        let events = try allEvents(reader)
        #expect(events.map(\.event.typeName) == ["PinDropped", "PinRemoved", "DeviceSeen", "PinDragged", "RegionChanged"])
        guard case .folded = try reader.verdict(of: events[1]) else { Issue.record("the removal was folded"); return }
        guard case .passedOver(let problem) = try reader.verdict(of: events[3]) else { Issue.record("the late drag was folded"); return }
        #expect(problem.message.contains("\(pin)"), "\(problem.message)")
        let decided = try reader.decidingEvent(for: events[3], verdict: .passedOver(problem))
        #expect(decided?.event.sequence == 2 && decided?.how == "this event had removed its pin")
        guard case .anotherDevicesView = try reader.verdict(of: events[4]) else { Issue.record("the laptop's view was merged"); return }
        #expect(removal.sequence == 2)
    }

    @Test func noSyncOrCloneWhileAForgetIsUnderWay() async throws {
        let folder = TemporaryFolder.made("device-forget-pending")
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        _ = try await phone.dropPin(at: paris)
        try await phone.close()
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: nil, options: deviceOptions(clock))
        // A forget cut short leaves its marker: the place's events are still whole.
        _ = FileManager.default.createFile(atPath: folder.sub("phone/forget.pending"), contents: Data("{}".utf8))
        #expect { try StoreSync.sync(store: folder.sub("laptop"), with: folder.sub("phone")) } throws: {
            "\($0)".contains("a forget is under way in \(folder.sub("phone"))")
        }
        #expect { try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("tablet"), name: nil) } throws: {
            "\($0)".contains("a forget is under way")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.sub("tablet")))
        #expect(!FileManager.default.fileExists(atPath: folder.sub("phone/devices")))
    }
}
