import Foundation
import StorageTestSupport
import Testing

/// `vt device`, `vt clone` and `vt sync` through the built program, as a person would use them.
@Suite(.waitsForProcesses) struct DeviceCommandTests {
    let vt = CLI()

    @Test func aClonedDeviceWritesAndSyncsAndTheLogSaysWhichDeviceWroteWhat() throws {
        let folder = TemporaryFolder.made("device-commands")
        let phone = folder.sub("phone"), laptop = folder.sub("laptop")
        #expect(try vt("pin", "drop", "48.8584", "2.2945", "--store", phone).status == 0)
        let alone = try vt("device", "--store", phone, "--json")
        let first = try CLI.object(alone.output)
        #expect(first["map"] as? String == first["device"] as? String, "a store of one device is its map's first device")
        #expect((first["others"] as? [Any])?.isEmpty == true)
        #expect(CLI.lines(try vt("log", "--store", phone, "--device", String((first["device"] as! String).prefix(6))).output).count == 1)

        let cloned = try vt("clone", "--from", phone, "--to", laptop, "--name", "laptop")
        #expect(cloned.status == 0, "\(cloned.output)\(cloned.errors)")
        #expect(cloned.output.contains("(laptop) of map \(first["map"] as! String)"))
        let device = try CLI.object(try vt("device", "--store", laptop, "--json").output)
        #expect(device["name"] as? String == "laptop" && device["map"] as? String == first["map"] as? String)
        #expect(try vt("pin", "drop", "41.8902", "12.4922", "--store", laptop).output.contains("(event 3)"), "after the phone's drop and the laptop's DeviceSeen of it")

        let synced = try vt("sync", "--store", laptop, "--with", phone)
        #expect(synced.status == 0, "\(synced.output)\(synced.errors)")
        #expect(synced.output.contains("took 0 event(s)") && synced.output.contains("gave 2 event(s)"))
        let log = try vt("log", "--store", phone)
        let lines = CLI.lines(log.output)
        let laptopID = String((device["device"] as! String).prefix(8))
        #expect(lines.count == 3 && lines[1].contains("\(laptopID)#1") && lines[1].contains("had seen device") && lines[2].contains("\(laptopID)#2") && lines[0].contains("#1"))
        // The laptop drags the phone's pin: alone, the laptop's log names a pin it never dropped;
        // verify weighs the rules in the merged fold, where the drag is sound.
        let pinID = String(CLI.lines(try vt("pins", "--store", laptop).output)[0].prefix(16))
        #expect(try vt("pin", "drag", pinID, "45.0", "7.0", "--store", laptop).status == 0)
        #expect(try vt("sync", "--store", phone, "--with", laptop).status == 0)
        let verified = try vt("verify", "--store", phone)
        #expect(verified.status == 0 && verified.output.contains("merged 4 events of 2 devices")
            && verified.output.contains("1 of 1 DeviceSeen events checked"), "\(verified.output)")
        let shown = try CLI.object(try vt("show", "4", "--store", phone, "--json").output)
        #expect(shown["folded"] as? Bool == true && shown["not_folded_because"] == nil, "the laptop's drag of the phone's pin counts")
        // One device's events, named by its name or by a prefix of its id.
        let laptopLines = CLI.lines(try vt("log", "--store", phone, "--device", "laptop").output)
        #expect(laptopLines.count == 3 && laptopLines.allSatisfy { $0.contains("\(laptopID)#") }, "\(laptopLines)")
        let phoneID = String((first["device"] as! String).prefix(8))
        #expect(CLI.lines(try vt("log", "--store", phone, "--device", phoneID).output).count == 1)
        #expect(CLI.lines(try vt("log", "--store", folder.sub("phone"), "--device", phoneID, "--json").output).count == 1)
        let unknown = try vt("log", "--store", phone, "--device", "tablet")
        #expect(unknown.status == 1 && unknown.errors.contains("--device tablet names no device of this store"), "\(unknown.errors)")

        // Numbers of one device's log: the laptop's event 3 (its drag) is the phone's position 4.
        let drag = try CLI.object(try vt("show", "3", "--device", "laptop", "--store", phone, "--json").output)
        let dragged = try #require(drag["event"] as? [String: Any])
        #expect(dragged["seq"] as? Int == 4 && dragged["device_seq"] as? Int == 3 && dragged["type"] as? String == "PinDragged", "\(dragged)")
        let before = try CLI.object(try vt("state", "--at", "2", "--device", "laptop", "--store", phone, "--json").output)
        #expect(before["seq"] as? Int == 3 && (before["pins"] as? [Any])?.count == 2, "after the laptop's drop: both pins, none dragged")
        #expect(try vt("diff", "0", "1", "--device", "laptop", "--store", phone).output.contains(pinID))
        #expect(CLI.lines(try vt("history", pinID, "--device", "laptop", "--store", phone).output).count == 1, "only the laptop's drag")
        let replayed = try CLI.object(try vt("replay", "--skip", "3", "--device", "laptop", "--store", phone, "--json").output)
        #expect(((replayed["skipped"] as? [[String: Any]])?.first?["seq"] as? Int) == 4)
        let missing = try vt("show", "9", "--device", "laptop", "--store", phone)
        #expect(missing.status == 1 && missing.errors.contains("log holds events 1…3; it has no event 9"), "\(missing.errors)")
        #expect(try vt("state", "--device", "laptop", "--store", phone).errors.contains("--device counts the numbers of --at"))

        // The phone forgets the laptop's pin; one sync from the laptop erases it there too.
        let laptopPin = try #require(CLI.lines(try vt("pins", "--store", laptop).output).map { String($0.prefix(16)) }.first { $0 != pinID })
        #expect(try vt("forget", laptopPin, "--yes", "--store", phone).status == 0)
        let forgetting = try vt("sync", "--store", laptop, "--with", phone)
        #expect(forgetting.status == 0 && forgetting.output.contains("place \(laptopPin) was forgotten on another device: erased here"), "\(forgetting.output)")
        #expect(!FileManager.default.fileExists(atPath: laptop + "/forget.arrived"))
        #expect(try vt("pins", "--store", laptop).output.contains(laptopPin) == false)
        #expect(try vt("verify", "--store", laptop).status == 0)

        // Following the phone: the laptop's next drop reaches it by a sync, as it lands (after
        // the laptop's DeviceSeen of the phone's forget).
        let shownBefore = CLI.lines(try vt("log", "--store", phone).output).count
        let follower = try LogFollower(vt, ["--store", phone])
        #expect(try follower.lines(until: shownBefore).count == shownBefore)
        #expect(try vt("pin", "drop", "40.0", "8.0", "--store", laptop).status == 0)
        #expect(try vt("sync", "--store", laptop, "--with", phone).status == 0)
        let followed = try follower.lines(until: shownBefore + 2)
        _ = follower.stop()
        #expect(followed.count == shownBefore + 2 && followed.last?["type"] as? String == "PinDropped"
            && followed.last?["seq"] as? Int == shownBefore + 2
            && (followed.last?["device"] as? String)?.hasPrefix(laptopID) == true, "\(followed.last ?? [:])")

        // Bad input: a name that is no name, a destination that holds something, another map.
        #expect(try vt("device", "--store", phone, "--name", "").status == 1)
        #expect(try vt("clone", "--from", phone, "--to", laptop).errors.contains("not an empty folder"))
        #expect(try vt("pin", "drop", "1", "1", "--store", folder.sub("other")).status == 0)
        let strangers = try vt("sync", "--store", phone, "--with", folder.sub("other"))
        #expect(strangers.status == 1 && strangers.errors.contains("only devices of one map sync"))
    }

    /// An album the laptop asked for and never answered (it went offline): on the phone,
    /// `vt album open` says so instead of waiting for ever, and New Collection asks there.
    @Test func anAlbumAskedForOnAnotherDeviceDoesNotKeepThisOneWaiting() throws {
        let folder = TemporaryFolder.made("device-album-elsewhere")
        let phone = folder.sub("phone"), laptop = folder.sub("laptop")
        let pin = try String(#require(CLI.object(try vt("pin", "drop", "48.8584", "2.2945", "--store", phone, "--json").output)["pin"] as? String))
        #expect(try vt("clone", "--from", phone, "--to", laptop, "--name", "laptop").status == 0)
        #expect(try vt("album", "open", pin, "--no-wait", "--photos", "demo", "--store", laptop).status == 0)
        #expect(try vt("sync", "--store", phone, "--with", laptop).status == 0)

        let opened = try vt("album", "open", pin, "--photos", "demo", "--store", phone, "--json")
        #expect(opened.status == 0 && opened.errors.contains("this album was asked for on device") && opened.errors.contains("(laptop)"), "\(opened.errors)")
        let album = try #require(try CLI.object(opened.output)["album"] as? [String: Any])
        #expect(album["status"] as? String == "listing" && album["awaits_another_device"] as? Bool == true && album["new_collection_enabled"] as? Bool == true)
        let replaced = try vt("album", "new-collection", pin, "--photos", "demo", "--per-page", "3", "--store", phone, "--json")
        #expect(replaced.status == 0, "\(replaced.errors)")
        let now = try #require(try CLI.object(replaced.output)["album"] as? [String: Any])
        #expect(now["collection"] as? Int == 2 && now["status"] as? String == "complete" && now["awaits_another_device"] == nil)
        // On the laptop, its own request is its to answer: New Collection still waits there.
        #expect(try vt("album", "new-collection", pin, "--photos", "demo", "--store", laptop).errors.contains("New Collection is available once it is complete"))
    }
}

