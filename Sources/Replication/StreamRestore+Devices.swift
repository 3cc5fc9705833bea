import DeviceLogs
import EventLog
import FileIO
import Foundation
import NATSClient
import VirtualTourist

/// A restore of one device of a map of several (docs/REPLICATION.md, "A store of several
/// devices"): the named stream's log becomes the store's own, and every other device the buckets
/// name is restored beside it as a copy, from its own stream, so that the store folds what the
/// original folded.
extension StreamRestore {
    /// What the stream's bucket says of its device and map, nil when it says nothing (a store of
    /// one device shipped it).
    static func devicesOfMap(jetStream: JetStream, stream: ReplicationStream) async throws -> BucketDevices? {
        guard let bucket = try await PhotoBucket.open(jetStream: jetStream, stream: stream) else { return nil }
        return try await Replicator.clusterCall("read the map's devices in the bucket \(stream.bucket)") {
            try await BucketDevices.read(from: bucket.store, stream: stream)
        }
    }

    /// Writes the restored device's `device.json`, and restores each other device the buckets
    /// name (those each further bucket names too) into `devices/<id>/` of `work`.
    static func restoreOtherDevices(
        of devices: BucketDevices, jetStream: JetStream, work: String, point: RestorePoint?, report: inout RestoreReport
    ) async throws {
        let main = devices.file
        let own = try LogReader(directory: Path.join(work, "log"), payloadCodec: EventCodec.blockCodec).identity()
        guard own?.logID == main.device.bytes else {
            throw ReplicationError.invalid(
                "the bucket's \(BucketDevices.fileName) names device \(main.device), but its stream holds the log \(own?.logIDHex ?? "of none"): it was not written by this map's replication")
        }
        guard devices.devices.count > 1 else { return }
        try main.save(in: work)
        var waiting = devices.devices.filter { $0 != main.device }
        var seen = Set(devices.devices)
        while let device = waiting.first {
            waiting.removeFirst()
            let stream = try ReplicationStream(name: "VT_" + device.description)
            let found = try await StreamReplacement.reading(stream, jetStream: jetStream, progress: nil) { () async throws -> Bool in
                let info: StreamInfo
                do { info = try await StreamReading.info(stream, jetStream: jetStream) } catch ReplicationError.streamNotFound(_) {
                    return false
                }
                guard info.state.messages > 0 else { return false }
                let folder = StoreDevices.folder(store: work, device: device)
                if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let built = try await buildLog(
                    jetStream: jetStream, stream: stream, info: info, into: Path.join(folder, "log"), point: point, required: false,
                    progress: nil)
                guard let head = built.head else {
                    // The device wrote nothing before the point: the map did not hold it yet.
                    try FileManager.default.removeItem(atPath: folder)
                    return true
                }
                guard head.sequence > 0 else { return true }
                report.otherDevices += 1
                report.otherDeviceEvents += head.sequence
                report.messages += built.messages
                report.otherStreams.append(stream)
                let theirs = try await devicesOfMap(jetStream: jetStream, stream: stream)
                if let file = theirs?.file, file.device != device || file.map != main.map {
                    throw ReplicationError.invalid(
                        "the bucket of stream \(stream.name) says it is device \(file.device)'s of map \(file.map), not device \(device)'s of map \(main.map)")
                }
                try (theirs?.file ?? DeviceFile(map: main.map, device: device, name: nil)).save(in: folder)
                for next in theirs?.devices ?? [] where !seen.contains(next) {
                    seen.insert(next)
                    waiting.append(next)
                }
                return true
            }
            if !found { report.devicesNotFound.append(device.description) }
        }
    }
}
