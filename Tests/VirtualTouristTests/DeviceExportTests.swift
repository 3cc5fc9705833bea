import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing
@testable import VirtualTourist

/// Export and import of a store of several devices (docs/EXPORT.md, "An export of several
/// devices", "Importing several devices"): the import is a new map with the same devices under
/// new ids, the same merged history position for position, the same state, and a history
/// that verifies; a file that breaks the merged order or the causal claims is refused by line.
@Suite struct DeviceExportTests {
    let place = ForgetTests()
    let paris = Coordinate(latitude: 48.8584, longitude: 2.2945)
    let rome = Coordinate(latitude: 41.8902, longitude: 12.4922)

    /// A phone and a laptop that both wrote, removed a photo, forgot a place and synced: every
    /// kind of thing an export of several devices carries (copies, `DeviceSeen`, erased events).
    func twoDevices(_ folder: TemporaryFolder) async throws {
        let clock = TestClock(1_800_000_000_000_000, stepPerReading: 10)
        let phone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        let secret = try await place.album(
            phone, at: place.secretPlace, count: 2, url: ForgetTests.secretURL, title: ForgetTests.secretTitle, bytes: ForgetTests.secretPhoto)
        let kept = try await place.album(
            phone, at: paris, count: 3, url: "https://photos.example/", title: "Tour", bytes: { fakePhoto(UInt64($0 + 100)) })
        try await phone.close()
        _ = try StoreSync.rename(store: folder.sub("phone"), to: "phone")
        _ = try StoreSync.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", options: deviceOptions(clock))

        let laptop = try await TouristStore.open(at: folder.sub("laptop"), options: deviceOptions(clock))
        _ = try await laptop.removePhoto(1, from: kept)
        try await laptop.dragPin(secret, to: place.secretMove)
        _ = try await laptop.dropPin(at: rome)
        try await laptop.close()
        let onPhone = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        _ = try await onPhone.forget(secret)
        try await onPhone.close()
        _ = try StoreSync.sync(store: folder.sub("phone"), with: folder.sub("laptop"))
        let again = try await TouristStore.open(at: folder.sub("phone"), options: deviceOptions(clock))
        try await again.dragPin(kept, to: rome)
        try await again.close()
    }

    func export(_ store: String, photos: Bool = true) throws -> [String] {
        var lines: [String] = []
        _ = try StoreReader.open(at: store).export(includePhotos: photos) { lines.append($0) }
        return lines
    }

    func importing(_ lines: [String], into store: String) async throws -> ImportSummary {
        let importer = try StoreImporter(folder: store)
        do {
            for (number, line) in lines.enumerated() { try importer.consume(line, lineNumber: number + 1) }
            return try await importer.finish()
        } catch {
            importer.abandon()
            throw error
        }
    }

    @Test func anExportOfTwoDevicesImportsAsANewMapWithTheSameDevicesAndHistory() async throws {
        let folder = TemporaryFolder.made("device-export")
        try await twoDevices(folder)
        let lines = try export(folder.sub("phone"))
        let header = try EventJSON.decodeLine(ExportLine.Header.self, lines[0])
        let original = try StoreSync.devices(of: folder.sub("phone"))
        #expect(header.version == 2 && header.device == original.this.device.description && header.map == original.this.map.description)
        #expect(header.devices?.map(\.name) == ["phone", "laptop"])

        let summary = try await importing(lines, into: folder.sub("imported"))
        let imported = try StoreSync.devices(of: folder.sub("imported"))
        #expect(imported.this.name == "phone" && imported.copies.map(\.file?.name) == ["laptop"])
        #expect(Set(imported.all).isDisjoint(with: original.all), "an import is a new map: every device gets a new id")
        #expect(imported.this.map == imported.this.device, "the map's first device keeps being its id")
        let renamed = Dictionary(uniqueKeysWithValues: zip(original.all.sorted(), imported.all.sorted()))
        #expect(renamed[original.this.device] == imported.this.device)

        // Position for position the same events: the same times and numbers, the devices renamed,
        // each DeviceSeen naming the new copy's head.
        let before = try allEvents(inStore: folder.sub("phone")), after = try allEvents(inStore: folder.sub("imported"))
        #expect(before.count == after.count && after.count == Int(summary.events))
        var seen = 0, forgotten = 0
        for (old, new) in zip(before, after) {
            #expect(new.sequence == old.sequence && new.timestamp == old.timestamp && new.cause == old.cause)
            #expect(new.origin == EventOrigin(device: renamed[old.origin!.device]!, sequence: old.origin!.sequence))
            switch (old.event, new.event) {
            case (.deviceSeen(let was), .deviceSeen(let now)):
                seen += 1
                #expect(now.device == renamed[was.device] && now.through == was.through)
                let log = now.device == imported.this.device ? folder.sub("imported") + "/log" : try #require(imported.copies.first { $0.id == now.device }).logPath
                let head = try LogReader(directory: log, payloadCodec: EventCodec.blockCodec).head(at: now.through)
                #expect(head?.hash.bytes == now.head)
            case (.forgotten, _):
                forgotten += 1
                #expect(new.event == old.event, "erased with the digest the export names")
            default:
                #expect(new.event == old.event)
            }
        }
        #expect(seen >= 2 && forgotten >= 6, "the laptop's and the phone's DeviceSeen; the forgotten place's events")

        let states = try (StoreReader.open(at: folder.sub("phone")).state(at: UInt64(before.count)), summary.state)
        #expect(try EventJSON.encodeLine(StateJSON(states.0)) == EventJSON.encodeLine(StateJSON(states.1)))
        #expect(summary.missingPhotos == 0 && summary.photos > 0)
        let verification = try StoreAudit.verify(folder: folder.sub("imported"), checkPhotoContents: true)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
        #expect(verification.notes.contains { $0.hasPrefix("\(seen) of \(seen) DeviceSeen events checked") }, "\(verification.notes)")

        // The new map's devices write on: the next event comes after the imported history.
        let store = try await TouristStore.open(at: folder.sub("imported"), options: deviceOptions(TestClock(1_900_000_000_000_000)))
        let dropped = try await store.dropPin(at: paris)
        #expect(store.state.pins[dropped] != nil && store.lastSequence == UInt64(before.count) + 1)
        try await store.close()
        // And a second round trip gives the same history again.
        let twice = try await importing(try export(folder.sub("imported"), photos: false), into: folder.sub("twice"))
        #expect(twice.events == UInt64(before.count) + 1 && twice.state.pins.count == store.state.pins.count)
    }

    /// The lines of an export with one changed by `change` (given the line and its index).
    func refused(_ lines: [String], _ folder: TemporaryFolder, _ name: String, change: (inout [String]) throws -> Void) async throws -> String {
        var changed = lines
        try change(&changed)
        let target = folder.sub(name)
        do {
            _ = try await importing(changed, into: target)
            Issue.record("\(name): imported")
            return ""
        } catch let error as DomainError {
            #expect(!FileManager.default.fileExists(atPath: target), "\(name): nothing is left behind")
            return error.message
        }
    }

    func object(_ line: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    func line(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func anImportRefusesAFileThatBreaksTheMergedOrderOrItsCausalClaims() async throws {
        let folder = TemporaryFolder.made("device-import-refused")
        try await twoDevices(folder)
        let lines = try export(folder.sub("phone"), photos: false)
        let events = lines.indices.filter { lines[$0].contains("\"type\"") }
        let seenLine = try #require(events.first { lines[$0].contains("\"DeviceSeen\"") })
        let laptop = try #require(try object(lines[0])["devices"] as? [[String: Any]])[1]["device"] as! String
        let laptopEvent = try #require(events.first { lines[$0].contains(laptop) && !lines[$0].contains("\"DeviceSeen\"") })

        // Two neighbours of different devices, each keeping its number: only the order is wrong.
        let pair = try #require(events.indices.dropLast().first { index in
            let (a, b) = (try object(lines[events[index]]), try object(lines[events[index + 1]]))
            return a["device"] as? String != b["device"] as? String && a["type"] as? String != "DeviceSeen" && b["type"] as? String != "DeviceSeen"
        })
        let swapped = try await refused(lines, folder, "swapped") { lines in
            let (a, b) = (events[pair], events[pair + 1])
            var first = try object(lines[a]), second = try object(lines[b])
            (first["seq"], second["seq"]) = (second["seq"], first["seq"])
            (lines[a], lines[b]) = (try line(second), try line(first))
        }
        #expect(swapped.hasPrefix("line \(events[pair + 1] + 1): event \(pair + 2) (") && swapped.contains("out of the merged order"), "\(swapped)")

        let ahead = try await refused(lines, folder, "seen-ahead") { lines in
            var seen = try object(lines[seenLine])
            seen["seen_through"] = 99
            lines[seenLine] = try line(seen)
        }
        #expect(ahead.contains("event 99, which the file has not given yet"), "\(ahead)")

        let own = try await refused(lines, folder, "seen-own") { lines in
            var seen = try object(lines[seenLine])
            seen["seen_device"] = seen["device"]
            lines[seenLine] = try line(seen)
        }
        #expect(own.contains("(DeviceSeen) names its own device"), "\(own)")

        let stranger = try await refused(lines, folder, "stranger") { lines in
            var event = try object(lines[laptopEvent])
            event["device"] = String(repeating: "ab", count: 16)
            lines[laptopEvent] = try line(event)
        }
        #expect(stranger.contains("device abababab's, which the header does not list"), "\(stranger)")

        let skipped = try await refused(lines, folder, "skipped") { lines in
            var event = try object(lines[laptopEvent])
            event["device_seq"] = (event["device_seq"] as! Int) + 1
            lines[laptopEvent] = try line(event)
        }
        #expect(skipped.contains("where its event"), "\(skipped)")

        let counted = try await refused(lines, folder, "counted") { lines in
            var header = try object(lines[0])
            var devices = header["devices"] as! [[String: Any]]
            devices[1]["events"] = (devices[1]["events"] as! Int) + 1
            header["devices"] = devices
            lines[0] = try line(header)
        }
        #expect(counted.contains("the header counts") && counted.contains("but the file held"), "\(counted)")

        let oneDevice = try await refused(lines, folder, "version-1") { lines in
            var header = try object(lines[0])
            header["version"] = 1
            lines[0] = try line(header)
        }
        #expect(oneDevice.contains("line 2: event 1 names a device, but the header is version 1"), "\(oneDevice)")

        let unnamed = try await refused(lines, folder, "bad-name") { lines in
            var header = try object(lines[0])
            var devices = header["devices"] as! [[String: Any]]
            devices[1]["name"] = "tab\tlet"
            header["devices"] = devices
            lines[0] = try line(header)
        }
        #expect(unnamed.hasPrefix("line 1: device") && unnamed.contains("name"), "\(unnamed)")
    }
}
