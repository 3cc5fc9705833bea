import DeviceLogs
import NATSClient

/// What a stream's photo bucket says of the device whose log the stream holds, and of its map
/// (docs/REPLICATION.md, "A store of several devices"): `device.json`, the device's own file
/// (map, device, name), and `devices.txt`, every device of the map the shipping store knew, one
/// id a line. A restore of one device's stream finds the map's other streams by these ids.
/// Neither name is 64 characters long, so a rewrite's sweep of photos no event names passes
/// them over.
struct BucketDevices: Equatable {
    static let fileName = DeviceFile.name
    static let listName = "devices.txt"
    /// The most devices a list may name (as an export of several devices).
    static let maxDevices = 1024

    var file: DeviceFile
    /// Every device of the map, the stream's own among them, by id.
    var devices: [DeviceID]

    init(file: DeviceFile, devices: [DeviceID]) {
        self.file = file
        self.devices = Array(Set(devices + [file.device])).sorted()
    }

    var listBytes: [UInt8] { Array(devices.map { $0.description + "\n" }.joined().utf8) }

    /// Writes both objects into `bucket`, each only when it says something else than the bucket
    /// has (every start of a replicator would write them otherwise). The list keeps the devices
    /// the bucket named before: a store that does not know a device yet does not take it away.
    func write(to bucket: ObjectStore, stream: ReplicationStream) async throws {
        let old = try await Self.read(from: bucket, stream: stream)
        let merged = BucketDevices(file: file, devices: devices + (old?.devices ?? []))
        if old?.file != file { _ = try await bucket.put(Self.fileName, data: file.bytes) }
        if old?.devices != merged.devices { _ = try await bucket.put(Self.listName, data: merged.listBytes) }
    }

    /// What `bucket` says, nil when it says nothing (a stream shipped by a store of one device,
    /// or before these objects were written).
    static func read(from bucket: ObjectStore, stream: ReplicationStream) async throws -> BucketDevices? {
        let place = "the bucket of stream \(stream.name)"
        guard let fileBytes = try await fetch(fileName, from: bucket) else { return nil }
        let file: DeviceFile
        do { file = try DeviceFile.decode(fileBytes, path: "\(fileName) in \(place)") } catch {
            throw ReplicationError.invalid("\(error)")
        }
        var devices: [DeviceID] = []
        if let list = try await fetch(listName, from: bucket) {
            let lines = list.split(separator: 0x0A, omittingEmptySubsequences: false)
            guard list.last == 0x0A, lines.count - 1 <= maxDevices else {
                throw ReplicationError.invalid("\(listName) in \(place) is not a list of at most \(maxDevices) device ids, one a line")
            }
            for (index, line) in lines.dropLast().enumerated() {
                guard let id = DeviceID(parsing: String(decoding: line, as: UTF8.self)) else {
                    throw ReplicationError.invalid("line \(index + 1) of \(listName) in \(place) is not a device id (32 hexadecimal digits)")
                }
                devices.append(id)
            }
        }
        return BucketDevices(file: file, devices: devices)
    }

    private static func fetch(_ name: String, from bucket: ObjectStore) async throws -> [UInt8]? {
        do { return try await bucket.get(name) } catch let error as ObjectStoreError where error == .notFound(bucket: bucket.bucket, name: name) {
            return nil
        }
    }
}
