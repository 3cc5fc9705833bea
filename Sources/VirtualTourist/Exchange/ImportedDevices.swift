import DeviceLogs
import EventLog
import FileIO

/// The logs of an import of several devices (docs/EXPORT.md, "Importing several devices"): a
/// new map with the export's devices, each under a new id, each log built whole from its
/// device's events as the merged order gives them.
///
/// ```swift
/// let devices = try ImportedDevices(header: header, store: folder, fileSystem: fileSystem)
/// let recorded = try devices.take(fromFile)   // checked, its device (and a DeviceSeen's) renamed
/// try devices.finish()                        // logs closed and synced, device.json files written
/// ```
///
/// Memory: the chain head after every event built (32 bytes an event), because a `DeviceSeen`
/// may name any earlier event of another device and must name it by the new log's head.
final class ImportedDevices {
    private struct Device {
        let old: DeviceID
        let new: DeviceID
        let name: String?
        let expected: UInt64
        let directory: String
        var builder: LogBuilder? = nil
        var built: UInt64 = 0
        /// The head after each event built, 32 bytes each.
        var heads: [UInt8] = []
    }

    static let maxDevices = 1_024

    /// The exporting device's new id: the new store's own device.
    let local: DeviceID
    let map: DeviceID
    private let store: String
    private let fileSystem: any FileSystem
    private var devices: [Device]
    private let byOldID: [DeviceID: Int]
    private var last: (time: LogTimestamp, device: DeviceID, sequence: UInt64)? = nil

    /// Checks the header's devices and gives each a new id, drawn at random and handed out in
    /// the order of the old ids, so that the merged order's tie-break, and every position, stays.
    ///
    /// - Throws: ``DomainError`` `.invalidArgument` naming what is wrong with the header.
    init(header: ExportLine.Header, store: String, fileSystem: any FileSystem) throws {
        guard let listed = header.devices, let exporting = header.device, let mapText = header.map else {
            throw DomainError(.invalidArgument, "an export of version 2 names its map, its device and its devices in the header")
        }
        guard listed.count >= 2 else {
            throw DomainError(.invalidArgument, "the header lists \(listed.count) device; an export of several devices lists every one")
        }
        // A person's devices are a handful; a header naming millions would only cost memory.
        guard listed.count <= Self.maxDevices else {
            throw DomainError(.invalidArgument, "the header lists \(listed.count) devices; an export holds at most \(Self.maxDevices)")
        }
        func id(_ text: String, _ field: String) throws -> DeviceID {
            guard let id = DeviceID(parsing: text) else {
                throw DomainError(.invalidArgument, "header field \"\(field)\": \"\(text.prefix(40))\" is not 32 hexadecimal digits")
            }
            return id
        }
        let oldMap = try id(mapText, "map")
        let oldLocal = try id(exporting, "device")
        let old = try listed.map { try id($0.device, "devices") }
        guard Set(old).count == old.count else { throw DomainError(.invalidArgument, "the header lists a device twice") }
        guard old.contains(oldLocal) else {
            throw DomainError(.invalidArgument, "the header's devices do not include the exporting device \(oldLocal.short)")
        }
        for entry in listed {
            if let name = entry.name, let problem = DeviceFile.problem(withName: name) {
                throw DomainError(.invalidArgument, "device \(entry.device.prefix(8))'s name: \(problem)")
            }
        }
        var fresh = Set<DeviceID>()
        while fresh.count < old.count { fresh.insert(DeviceID.random()) }
        let renamed = Dictionary(uniqueKeysWithValues: zip(old.sorted(), fresh.sorted()))
        local = renamed[oldLocal]!
        map = renamed[oldMap] ?? DeviceID.random()
        self.store = store
        self.fileSystem = fileSystem
        devices = zip(listed, old).map { entry, oldID in
            let new = renamed[oldID]!
            let directory = new == renamed[oldLocal]! ? Path.join(store, "log") : StoreDevices.logPath(store: store, device: new)
            return Device(old: oldID, new: new, name: entry.name, expected: entry.events, directory: directory)
        }
        byOldID = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1, $0) })
    }

    /// Checks one event of the file and adds it to its device's log; returns it as the new
    /// store holds it (new ids; a `DeviceSeen` naming the new log's head).
    func take(_ recorded: RecordedEvent) throws -> RecordedEvent {
        guard let origin = recorded.origin else {
            throw DomainError(.invalidArgument, "event \(recorded.sequence) names no device; every event of an export of several devices does")
        }
        guard let index = byOldID[origin.device] else {
            throw DomainError(.invalidArgument, "event \(recorded.sequence) is device \(origin.device.short)'s, which the header does not list")
        }
        let device = devices[index]
        guard origin.sequence == device.built + 1 else {
            throw DomainError(
                .invalidArgument,
                "event \(recorded.sequence) is device \(origin.device.short)'s event \(origin.sequence), where its event \(device.built + 1) should come")
        }
        if let last, (recorded.timestamp, origin.device, origin.sequence) <= last {
            throw DomainError(
                .invalidArgument,
                "event \(recorded.sequence) (device \(origin.device.short)'s event \(origin.sequence)) is out of the merged order: it sorts before the event before it")
        }
        if let cause = recorded.cause, cause == 0 || cause >= origin.sequence {
            throw DomainError(
                .invalidArgument,
                "event \(recorded.sequence) names its device's event \(cause) as its cause, which is not an earlier event of that device")
        }
        var event = recorded.event
        if case .deviceSeen(let seen) = event { event = .deviceSeen(try renamed(seen, by: device, at: recorded.sequence)) }
        try add(LogEvent(
            sequence: origin.sequence, timestamp: recorded.timestamp, payload: ArraySlice(Self.stored(event, cause: recorded.cause)),
            isErased: { if case .forgotten = event { true } else { false } }()), to: index)
        last = (recorded.timestamp, origin.device, origin.sequence)
        return RecordedEvent(
            sequence: recorded.sequence, timestamp: recorded.timestamp, cause: recorded.cause, event: event,
            origin: EventOrigin(device: device.new, sequence: origin.sequence))
    }

    /// A `DeviceSeen` as the new store holds it: the named device's new id and its new head.
    private func renamed(_ seen: DeviceSeen, by writer: Device, at position: UInt64) throws -> DeviceSeen {
        guard seen.device != writer.old else {
            throw DomainError(.invalidArgument, "event \(position) (DeviceSeen) names its own device \(seen.device.short)")
        }
        guard let named = byOldID[seen.device].map({ devices[$0] }) else {
            throw DomainError(
                .invalidArgument, "event \(position) (DeviceSeen) names device \(seen.device.short), which the header does not list")
        }
        guard seen.through <= named.built else {
            throw DomainError(
                .invalidArgument,
                "event \(position) (DeviceSeen) names device \(seen.device.short)'s event \(seen.through), which the file has not given yet (the merged order is causal)")
        }
        let start = Int(seen.through - 1) * LogFormat.digestSize
        return DeviceSeen(device: named.new, through: seen.through, head: Array(named.heads[start..<start + LogFormat.digestSize]))
    }

    /// The bytes the log stores: the payload, or an erased event's digest and what it keeps.
    private static func stored(_ event: DomainEvent, cause: UInt64?) -> [UInt8] {
        if case .forgotten(let forgotten) = event { return forgotten.digest.bytes + EventCodec.keptOnErase(event) }
        return EventCodec.encode(event, cause: cause)
    }

    private func add(_ event: LogEvent, to index: Int) throws {
        do {
            if devices[index].builder == nil { devices[index].builder = try builder(for: devices[index]) }
            try devices[index].builder!.add(event)
        } catch let error as DomainError {
            throw error
        } catch {
            throw TouristStore.storageError(error, "device \(devices[index].old.short)'s events cannot be written")
        }
        devices[index].built += 1
        devices[index].heads += devices[index].builder!.head.hash.bytes
    }

    private func builder(for device: Device) throws -> LogBuilder {
        if device.new != local {
            try fileSystem.createDirectoryDurably(StoreDevices.folder(store: store, device: device.new))
        }
        return try LogBuilder(
            directory: device.directory, identity: LogIdentity(logID: device.new.bytes, origin: .none),
            configuration: .touristStore, fileSystem: fileSystem)
    }

    /// Checks each device's count against the header, closes every log (this device's even
    /// when it wrote nothing) and writes every `device.json`.
    func finish() throws {
        for device in devices where device.built != device.expected {
            throw DomainError(
                .invalidArgument,
                "the header counts \(device.expected) events of device \(device.old.short), but the file held \(device.built)")
        }
        do {
            for index in devices.indices {
                if devices[index].builder == nil && devices[index].new == local { devices[index].builder = try builder(for: devices[index]) }
                _ = try devices[index].builder?.finish()
                let device = devices[index]
                let folder = device.new == local ? store : StoreDevices.folder(store: store, device: device.new)
                if device.new != local && device.builder == nil { try fileSystem.createDirectoryDurably(folder) }
                try DeviceFile(map: map, device: device.new, name: device.name).save(in: folder, fileSystem: fileSystem)
            }
            try fileSystem.syncDirectory(Path.join(store, StoreDevices.folderName))
        } catch let error as DomainError {
            throw error
        } catch {
            throw TouristStore.storageError(error, "the imported devices' logs cannot be finished")
        }
    }

    /// Each device's name, or its new id's first digits when it has none, this device first.
    var names: [String] { devices.map { $0.name ?? $0.new.short } }

    /// Removes the logs begun (the caller removes the store's folder).
    func abandon() {
        for device in devices where device.builder != nil { device.builder!.abandon() }
    }
}
