import DeviceLogs
import Foundation
import StorageTestSupport
import Testing

@Suite struct DeviceFileTests {
    let map = DeviceID(parsing: "6f1c00000000000000000000000000a1")!
    let device = DeviceID(parsing: "A90E00000000000000000000000000B2")!

    @Test func idsParseOnlyThirtyTwoHexDigits() {
        #expect(device.description == "a90e00000000000000000000000000b2")
        #expect(DeviceID(parsing: device.description) == device)
        for bad in ["", "a90e", "a90e00000000000000000000000000b", "a90e00000000000000000000000000b2f", "g90e00000000000000000000000000b2", "+90e00000000000000000000000000b2"] {
            #expect(DeviceID(parsing: bad) == nil, "\(bad)")
        }
        #expect(throws: DeviceError.self) { try DeviceID(logID: [1, 2, 3]) }
        #expect(DeviceID.random() != DeviceID.random())
    }

    @Test func roundTripsWithAndWithoutAName() throws {
        for name in [nil, "laptop", "Zoë's \"phone\" \\ 手机", "a"] as [String?] {
            let file = DeviceFile(map: map, device: device, name: name)
            #expect(try DeviceFile.decode(file.bytes, path: "device.json") == file)
        }
    }

    @Test func savesAtomicallyAndLoadsBack() throws {
        let folder = TemporaryFolder.made("device-file")
        #expect(try DeviceFile.load(from: folder.path) == nil)
        let file = DeviceFile(map: map, device: device, name: "laptop")
        try file.save(in: folder.path)
        #expect(try DeviceFile.load(from: folder.path) == file)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["device.json"])
    }

    @Test(arguments: [
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": "x", "extra": 1}"#, "unknown key \"extra\""),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2"}"#, "appears twice"),
        (#"{"format": 2, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2"}"#, "newer version"),
        (#"{"format": 1, "map": "6f1c", "device": "a90e00000000000000000000000000b2"}"#, "\"map\" must be 32"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1"}"#, "\"device\" must be 32"),
        (#"{"map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2"}"#, "\"format\" must be"),
        (#"{"format": 1.0, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2"}"#, "whole"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": ""}"#, "cannot be empty"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": " x"}"#, "spaces"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": "a\u0007b"}"#, "control"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": 5}"#, "must be a text"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": {"a": 1}}"#, "string or a whole number"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2"} {}"#, "bytes follow"),
        (#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": "\ud800"}"#, "surrogate"),
        (#"["format"]"#, "expected '{'"),
    ])
    func refusesWhatIsNotExactlyTheFormat(_ text: String, _ said: String) {
        #expect {
            try DeviceFile.decode(Array(text.utf8), path: "/s/device.json")
        } throws: { error in
            let error = error as! DeviceError
            return error.code == .notAStore && error.message.hasPrefix("/s/device.json cannot be read") && error.message.contains(said)
        }
    }

    @Test func refusesBytesThatAreNotUTF8() {
        var bytes = Array(#"{"format": 1, "map": "6f1c00000000000000000000000000a1", "device": "a90e00000000000000000000000000b2", "name": "ab"}"#.utf8)
        bytes[bytes.count - 3] = 0xFF
        #expect(throws: DeviceError.self) { try DeviceFile.decode(bytes, path: "device.json") }
    }

    @Test func namesAreCheckedForLength() {
        #expect(DeviceFile.problem(withName: String(repeating: "é", count: 64)) == nil)
        #expect(DeviceFile.problem(withName: String(repeating: "é", count: 65)) != nil)
        #expect(DeviceFile.problem(withName: "tab\there") != nil)
    }
}
