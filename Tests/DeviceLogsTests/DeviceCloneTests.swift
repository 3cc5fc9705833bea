import BlobStore
import DeviceLogs
import EventLog
import Foundation
import StorageTestSupport
import Testing

@Suite struct DeviceCloneTests {
    /// A store folder as the app leaves it: a log with events, photos in blobs/.
    static func makeStore(_ path: String, id: DeviceID, events: Int, photos: Int) throws -> (head: LogHead, photos: Set<BlobDigest>) {
        let log = try EventLog.open(at: path + "/log", configuration: DeviceLogFixtures.configuration(id: id))
        try DeviceLogFixtures.append(events, to: log, prefix: id.short)
        let head = log.head
        try log.close()
        let blobs = try BlobStore(directory: path + "/blobs")
        var digests: Set<BlobDigest> = []
        for index in 0..<photos {
            let lease = try blobs.put([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("photo \(index) of \(id)".utf8))
            digests.insert(lease.digest)
            lease.release()
        }
        return (head, digests)
    }

    @Test func aCloneIsANewDeviceOfTheSameMapWithEveryLogAndPhoto() throws {
        let folder = TemporaryFolder.made("clone")
        let phone = DeviceID.random()
        let (head, photos) = try Self.makeStore(folder.sub("phone"), id: phone, events: 25, photos: 3)
        let report = try DeviceClone.clone(from: folder.sub("phone"), to: folder.sub("laptop"), name: "laptop", configuration: LogConfiguration())
        #expect(report.map == phone && report.device != phone && report.name == "laptop")
        #expect(report.logs.map(\.head) == [head] && report.photos == 3)

        let devices = try StoreDevices.read(store: folder.sub("laptop"))
        #expect(devices.this == DeviceFile(map: phone, device: report.device, name: "laptop") && devices.hasFile)
        #expect(devices.copies.map(\.id) == [phone] && devices.copies[0].head == head)
        #expect(devices.copies[0].file == DeviceFile(map: phone, device: phone, name: nil))
        #expect(try LogReader(directory: folder.sub("laptop/log")).identity()?.logID == report.device.bytes)
        #expect(try Set(BlobStore(directory: folder.sub("laptop/blobs")).storedBlobs().map(\.digest)) == photos)
        #expect(!FileManager.default.fileExists(atPath: folder.sub("laptop.partial")))
        // The source is untouched: still a single device without a device.json.
        #expect(try !StoreDevices.read(store: folder.sub("phone")).hasFile)

        // A clone of the clone knows both devices (the laptop's log is empty: nothing to copy yet).
        let third = try DeviceClone.clone(from: folder.sub("laptop"), to: folder.sub("tablet"), name: nil, configuration: LogConfiguration())
        #expect(third.map == phone && ![phone, report.device].contains(third.device))
        let tablet = try StoreDevices.read(store: folder.sub("tablet"))
        #expect(tablet.copies.map(\.id) == [phone] && tablet.copies[0].head == head)
        #expect(try DeviceFile.load(from: StoreDevices.folder(store: folder.sub("tablet"), device: report.device))?.name == "laptop")
    }

    @Test func refusesABadNameAndADestinationThatHoldsSomething() throws {
        let folder = TemporaryFolder.made("clone-refusals")
        _ = try Self.makeStore(folder.sub("phone"), id: DeviceID.random(), events: 3, photos: 0)
        #expect { try DeviceClone.clone(from: folder.sub("phone"), to: folder.sub("x"), name: "", configuration: LogConfiguration()) } throws: {
            ($0 as! DeviceError).code == .invalidArgument
        }
        try FileManager.default.createDirectory(atPath: folder.sub("full"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: folder.sub("full/keep"), contents: Data([1]))
        #expect { try DeviceClone.clone(from: folder.sub("phone"), to: folder.sub("full"), name: nil, configuration: LogConfiguration()) } throws: {
            ($0 as! DeviceError).code == .invalidArgument && "\($0)".contains("not an empty folder")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.sub("full")) == ["keep"])
        #expect { try DeviceClone.clone(from: folder.sub("nothing"), to: folder.sub("y"), name: nil, configuration: LogConfiguration()) } throws: {
            ($0 as! DeviceError).code == .notAStore
        }
        #expect(!FileManager.default.fileExists(atPath: folder.sub("y")) && !FileManager.default.fileExists(atPath: folder.sub("y.partial")))
        // An empty folder is a fine destination.
        try FileManager.default.createDirectory(atPath: folder.sub("empty"), withIntermediateDirectories: true)
        _ = try DeviceClone.clone(from: folder.sub("phone"), to: folder.sub("empty"), name: nil, configuration: LogConfiguration())
        #expect(try StoreDevices.read(store: folder.sub("empty")).copies.count == 1)
    }

    @Test func aStoreWhoseDeviceFileNamesAnotherLogIsRefused() throws {
        let folder = TemporaryFolder.made("clone-mismatch")
        let phone = DeviceID.random()
        _ = try Self.makeStore(folder.sub("phone"), id: phone, events: 2, photos: 0)
        try DeviceFile(map: phone, device: DeviceID.random(), name: nil).save(in: folder.sub("phone"))
        #expect { try StoreDevices.read(store: folder.sub("phone")) } throws: {
            ($0 as! DeviceError).code == .notAStore && "\($0)".contains("does not belong to this log")
        }
    }
}
