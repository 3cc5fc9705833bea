import BlobStore
import EventLog
import FileIO

/// `vt clone`: a new device of a store's map (docs/DEVICES.md, "Commands"). The new store gets
/// its own log (a new device id), a copy of every log the source holds (its own and its
/// copies), each device's `device.json`, and the source's photos; it is built beside its place
/// (`<destination>.partial`) and renamed into place whole, so an interrupted clone leaves
/// nothing at the destination.
///
/// ```swift
/// let report = try DeviceClone.clone(from: "~/phone-store", to: "~/laptop-store", name: "laptop", configuration: .touristStore)
/// report.device        // the new device's id
/// ```
///
/// The source is read as a reader reads (no lock), so it may be open in another process.
public enum DeviceClone {
    public struct Report: Sendable {
        public var map: DeviceID
        public var device: DeviceID
        public var name: String?
        /// Each copied log and its head.
        public var logs: [LogCopier.Report] = []
        public var photos = 0
        public var photoBytes: Int64 = 0
        /// Whether an interrupted clone's leftovers were removed first.
        public var removedPartial = false
    }

    /// What the clone is doing, for progress: a log being copied, or photos copied so far.
    public enum Step: Sendable {
        case log(DeviceID)
        case photos(done: Int, of: Int)
    }

    /// - Parameters:
    ///   - configuration: how the logs are written (the store's); its clock times the new log.
    /// - Throws: ``DeviceError`` `.invalidArgument` for a bad name or a destination that exists
    ///   and is not empty; `.notAStore` when the source is not a store; `.refused` when a log in
    ///   it does not verify; `.storage`. Nothing is left at the destination.
    public static func clone(
        from source: String, to destination: String, name: String?, configuration: LogConfiguration,
        fileSystem: any FileSystem = PosixFileSystem(), progress: (@Sendable (Step) -> Void)? = nil
    ) throws -> Report {
        if let name, let problem = DeviceFile.problem(withName: name) { throw DeviceError(.invalidArgument, problem) }
        let destination = destination.count > 1 && destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        try checkDestination(destination, fileSystem)
        let devices = try StoreDevices.read(store: source, payloadCodec: configuration.payloadCodec, fileSystem: fileSystem)
        if let (device, reason) = devices.damaged.first {
            throw DeviceError(.refused, "the source's copy of device \(device)'s log is damaged, so it cannot be cloned whole: \(reason)")
        }
        var device = DeviceID.random()
        while devices.all.contains(device) { device = DeviceID.random() }
        var report = Report(map: devices.this.map, device: device, name: name)
        let partial = destination + ".partial"
        report.removedPartial = try LogCopier.storage("look at \(partial)") { try fileSystem.exists(partial) }
        if report.removedPartial {
            // Only an interrupted clone's leftovers: a clone's layout, or nothing yet.
            let entries = try LogCopier.storage("look into \(partial)") { try fileSystem.listDirectory(partial) }
            guard Set(entries).isSubset(of: [StoreDevices.folderName, "log", "blobs", DeviceFile.name, DeviceFile.name + ".tmp"]) else {
                throw DeviceError(
                    .invalidArgument, "\(partial) holds other things than an interrupted clone's; move it away, then clone again")
            }
            try LogCopier.storage("remove \(partial)") { try fileSystem.removeTree(partial) }
        }
        do {
            try LogCopier.storage("create \(partial)") { try fileSystem.createDirectoryDurably(Path.join(partial, StoreDevices.folderName)) }
            // The source's own log, then its copies: every device of the map it knows.
            var logs: [(DeviceID, String, DeviceFile?)] = [(devices.this.device, Path.join(source, "log"), devices.hasFile ? devices.this : nil)]
            logs += devices.copies.map { ($0.id, $0.logPath, $0.file) }
            for (id, path, file) in logs {
                // A new copy: nothing to lag behind, so whose log it is does not matter.
                progress?(.log(id))
                let folder = StoreDevices.folder(store: partial, device: id)
                try LogCopier.storage("create \(folder)") { try fileSystem.createDirectoryDurably(folder) }
                if let copied = try LogCopier.update(
                    copy: Path.join(folder, "log"), from: path, refusing: device, configuration: configuration, fileSystem: fileSystem)
                {
                    report.logs.append(copied)
                }
                try (file ?? DeviceFile(map: devices.this.map, device: id, name: nil)).save(in: folder, fileSystem: fileSystem)
            }
            try createOwnLog(in: partial, device: device, configuration: configuration, fileSystem: fileSystem)
            try DeviceFile(map: devices.this.map, device: device, name: name).save(in: partial, fileSystem: fileSystem)
            (report.photos, report.photoBytes) = try copyPhotos(from: source, to: partial, fileSystem: fileSystem, progress: progress)
            try putInPlace(partial, at: destination, what: "the clone", fileSystem)
        } catch {
            try? fileSystem.removeTree(partial)
            throw error
        }
        return report
    }

    /// Renames the store built at `partial` into place at `destination`, durably. Every name in
    /// it must be durable before it appears: a rename makes the folder's own name durable, not
    /// the names inside it.
    static func putInPlace(_ partial: String, at destination: String, what: String, _ fileSystem: any FileSystem) throws {
        try LogCopier.storage("put \(what) in place at \(destination)") {
            try syncTree(partial, fileSystem)
            try fileSystem.rename(partial, to: destination)
            try fileSystem.syncDirectory(Path.directory(of: destination))
        }
    }

    /// Syncs `folder` and every folder under it, deepest first.
    private static func syncTree(_ folder: String, _ fileSystem: any FileSystem) throws {
        for name in try fileSystem.listDirectory(folder) {
            let path = Path.join(folder, name)
            if try fileSystem.status(path)?.kind == .directory { try syncTree(path, fileSystem) }
        }
        try fileSystem.syncDirectory(folder)
    }

    /// A destination must be new or an empty folder, in a folder that exists.
    static func checkDestination(_ destination: String, _ fileSystem: any FileSystem) throws {
        let parent = Path.directory(of: destination)
        guard try LogCopier.storage("look at \(parent)", { try fileSystem.status(parent) })?.kind == .directory else {
            throw DeviceError(.invalidArgument, "\(parent) is not a folder; a clone goes into a new folder inside an existing one")
        }
        guard let status = try LogCopier.storage("look at \(destination)", { try fileSystem.status(destination) }) else { return }
        guard status.kind == .directory, try LogCopier.storage("list \(destination)", { try fileSystem.listDirectory(destination) }).isEmpty
        else {
            throw DeviceError(.invalidArgument, "\(destination) exists and is not an empty folder; a clone makes a new store and never merges into one")
        }
    }

    /// The new device's log: empty, with the device's id.
    static func createOwnLog(
        in store: String, device: DeviceID, configuration: LogConfiguration, fileSystem: any FileSystem
    ) throws {
        var configuration = configuration
        configuration.newLogID = device.bytes
        let log = try LogCopier.storage("create the new device's log") {
            try EventLog.open(at: Path.join(store, "log"), configuration: configuration, fileSystem: fileSystem)
        }
        try LogCopier.storage("close the new device's log") { try log.close() }
    }

    /// Every photo the source stores, each read, hashed and stored again (content addressing
    /// checks it on the way); photos no state refers to any more go at the new store's next
    /// collection.
    private static func copyPhotos(
        from source: String, to store: String, fileSystem: any FileSystem, progress: (@Sendable (Step) -> Void)?
    ) throws -> (Int, Int64) {
        let from = Path.join(source, "blobs")
        guard try LogCopier.storage("look at \(from)", { try fileSystem.exists(from) }) else { return (0, 0) }
        let sourceBlobs = try LogCopier.storage("read \(from)") { try BlobStore(directory: from, fileSystem: fileSystem) }
        let blobs = try LogCopier.storage("create the photo folder") { try BlobStore(directory: Path.join(store, "blobs"), fileSystem: fileSystem) }
        let stored = try LogCopier.storage("list \(from)") { try sourceBlobs.storedBlobs() }
        var bytes: Int64 = 0
        for (index, blob) in stored.enumerated() {
            guard let content = try LogCopier.storage("read the photo \(blob.digest)", { try sourceBlobs.get(blob.digest) }) else { continue }
            let lease = try LogCopier.storage("copy the photo \(blob.digest)") { try blobs.put(content) }
            lease.release()
            guard lease.digest == blob.digest else {
                throw DeviceError(.refused, "the photo file \(blob.path) does not hash to its name (\(lease.digest)); the source's photos are damaged: run `vt verify` there")
            }
            bytes += Int64(content.count)
            if index % 64 == 63 || index == stored.count - 1 { progress?(.photos(done: index + 1, of: stored.count)) }
        }
        return (stored.count, bytes)
    }
}
