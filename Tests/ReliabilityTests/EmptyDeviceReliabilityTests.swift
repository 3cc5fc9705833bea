import DeviceLogs
import EventLog
import FileIO
import Foundation
import ReliabilitySupport
import StorageTestSupport
import Testing
import VirtualTourist

/// The new device a replica of a map, or a device made from the cluster, starts from
/// (`DeviceClone.emptyDevice`, docs/SYNC.md) under the simulated disk: the power goes at every
/// I/O operation, with each way a disk keeps what was not synced. Every time the destination
/// holds nothing, and making it again gives a whole device, or it holds a whole device: a store
/// of the map that knows the other device and whose own log is empty.
@Suite struct EmptyDeviceReliabilityTests {
    static let folder = "/disk/replica"

    @Test(arguments: SimulatedDisk.PowerLoss.allCases)
    func aPowerCutAtEveryOperationLeavesNothingOrAWholeDevice(_ loss: SimulatedDisk.PowerLoss) async throws {
        let map = DeviceID.random()
        let phone = DeviceFile(map: map, device: DeviceID.random(), name: "phone")
        let configuration = crashTestOptions().log
        func make(on disk: SimulatedDisk) throws -> DeviceFile {
            try DeviceClone.emptyDevice(
                of: map, at: Self.folder, name: "replica", taken: [], knowing: [phone], configuration: configuration, fileSystem: disk)
        }
        let whole = SimulatedDisk(root: "/disk")
        _ = try make(on: whole)
        let total = whole.operationCount
        var outcomes = (nothing: 0, whole: 0)
        for cut in 1...total + 1 {
            let disk = SimulatedDisk(root: "/disk")
            disk.cutPower(atOperation: cut)
            _ = try? make(on: disk)
            var survivor = disk.afterPowerLoss(loss, seed: UInt64(cut))
            if try survivor.exists(Self.folder) {
                outcomes.whole += 1
            } else {
                outcomes.nothing += 1
                // Made again, it replaces what the cut left beside the destination.
                survivor = survivor.afterPowerLoss(.keepEverything)
                _ = try make(on: survivor)
            }
            let devices = try StoreDevices.read(store: Self.folder, payloadCodec: EventCodec.blockCodec, fileSystem: survivor)
            #expect(
                devices.this.map == map && devices.this.name == "replica" && devices.others == [phone.device],
                "power cut at I/O \(cut) of \(total), \(loss): \(devices.this), knowing \(devices.others)")
            var options = crashTestOptions()
            options.createIfMissing = false
            options.collectionInterval = nil
            let store = try await TouristStore.open(at: Self.folder, options: options, fileSystem: survivor)
            #expect(store.lastSequence == 0 && store.state.pins.isEmpty, "power cut at I/O \(cut), \(loss)")
            try await store.close()
        }
        print("new empty device, power loss \(loss): \(total + 1) cut points; nothing at the destination after \(outcomes.nothing), a whole device after \(outcomes.whole)")
        #expect(outcomes.nothing > 0 && outcomes.whole > 0)
    }
}
