import EventLog
import FileIO

extension DeviceClone {
    /// A device of `map` that holds nothing yet: its own empty log (a new device id, none of
    /// `taken`) and its `device.json`, with a `devices/<id>/device.json` for each of `knowing`
    /// (devices it knows of before it holds any of their events), built beside its place and
    /// renamed into place whole, as a clone is. What a replica of a map of several devices, or a
    /// new device made from the cluster, starts from: every device's log then comes as a copy,
    /// taken from its stream (docs/SYNC.md, "Following a map", "A new device from the cluster").
    ///
    /// - Throws: ``DeviceError`` `.invalidArgument` for a bad name or a destination that exists
    ///   and is not empty; `.storage`. Nothing is left at the destination.
    public static func emptyDevice(
        of map: DeviceID, at destination: String, name: String?, taken: Set<DeviceID>, knowing: [DeviceFile] = [],
        configuration: LogConfiguration, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> DeviceFile {
        if let name, let problem = DeviceFile.problem(withName: name) { throw DeviceError(.invalidArgument, problem) }
        let destination = destination.count > 1 && destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        try checkDestination(destination, fileSystem)
        var device = DeviceID.random()
        let known = Set(knowing.map(\.device)).union(taken)
        while known.contains(device) || device == map { device = DeviceID.random() }
        if let other = knowing.first(where: { $0.map != map }) {
            throw DeviceError(.invalidArgument, "device \(other.device) is of map \(other.map), not of map \(map)")
        }
        let file = DeviceFile(map: map, device: device, name: name)
        let partial = destination + ".partial"
        do {
            // Only what this makes can be there: an earlier try's leftovers, or nothing.
            if try LogCopier.storage("look at \(partial)", { try fileSystem.exists(partial) }) {
                let entries = try LogCopier.storage("look into \(partial)") { try fileSystem.listDirectory(partial) }
                guard Set(entries).isSubset(of: ["log", StoreDevices.folderName, DeviceFile.name, DeviceFile.name + ".tmp"]) else {
                    throw DeviceError(.invalidArgument, "\(partial) holds other things than a new device's; move it away, then try again")
                }
                try LogCopier.storage("remove \(partial)") { try fileSystem.removeTree(partial) }
            }
            try LogCopier.storage("create \(partial)") { try fileSystem.createDirectoryDurably(partial) }
            try createOwnLog(in: partial, device: device, configuration: configuration, fileSystem: fileSystem)
            for other in knowing {
                let folder = StoreDevices.folder(store: partial, device: other.device)
                try LogCopier.storage("create \(folder)") { try fileSystem.createDirectoryDurably(folder) }
                try other.save(in: folder, fileSystem: fileSystem)
            }
            try file.save(in: partial, fileSystem: fileSystem)
            try putInPlace(partial, at: destination, what: "the new device", fileSystem)
        } catch {
            try? fileSystem.removeTree(partial)
            throw error
        }
        return file
    }
}
