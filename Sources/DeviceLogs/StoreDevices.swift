import EventLog
import FileIO

/// The devices of a store folder (docs/DEVICES.md, "The shape"): this device, whose log is
/// `log/`, and the copies of the other devices' logs in `devices/<id>/log/`, each checked to be
/// the log its folder and its `device.json` name, of the same map.
///
/// ```swift
/// let devices = try StoreDevices.read(store: folder, payloadCodec: codec)
/// devices.this.device          // this device's id (its log's id)
/// devices.copies.map(\.id)     // the others, by id
/// ```
///
/// Reading takes no lock and changes nothing.
public struct StoreDevices: Sendable {
    /// The folder of the copies in a store.
    public static let folderName = "devices"

    /// A copy of another device's log held by this store.
    public struct Copy: Sendable, Hashable {
        public var id: DeviceID
        /// What the device said of itself when its log was last copied (nil if it never said).
        public var file: DeviceFile?
        public var logPath: String
        /// Its last event and the head there.
        public var head: LogHead
    }

    public let store: String
    /// This device: from `device.json`, or, in a store without one, the map's only device
    /// (map id and device id are its log's id; no name).
    public let this: DeviceFile
    /// Whether the store has a `device.json` (a store that never had a second device or a
    /// name has none).
    public let hasFile: Bool
    /// The other devices' copies, by id.
    public let copies: [Copy]
    /// Every other device this store knows of, by id: those with a copy, and those whose
    /// `device.json` came without events (a device that has written nothing yet).
    public let others: [DeviceID]
    /// Leftovers of an interrupted copy (`<id>/log.partial`), removed by the next sync or clone.
    public let leftovers: [String]
    /// Copies that do not read back as logs (damage), each with why; not in ``copies``. Removing
    /// the copy's folder and syncing with a device that has the log takes it again whole.
    public let damaged: [(device: DeviceID, reason: String)]

    /// The path of the copy of `device` in `store`.
    public static func logPath(store: String, device: DeviceID) -> String {
        Path.join(folder(store: store, device: device), "log")
    }

    /// The folder of `device`'s copy and its `device.json`.
    public static func folder(store: String, device: DeviceID) -> String {
        Path.join(Path.join(store, folderName), device.description)
    }

    /// Reads the layout of `store`.
    ///
    /// - Throws: ``DeviceError`` `.notAStore` when the store has no log, a `device.json` names
    ///   another device than the log, or a copy is not the log its folder names or belongs to
    ///   another map; `.storage` when reading fails.
    /// Whether the store in `store` knows another device, by the names in `devices/` alone (no
    /// log is read): what ``others`` would hold is not empty.
    ///
    /// - Throws: ``DeviceError`` `.notAStore` for a folder there that is no device's, as ``read``.
    public static func knowsAnother(store: String, fileSystem: any FileSystem = PosixFileSystem()) throws -> Bool {
        let folder = Path.join(store, folderName)
        guard try LogCopier.storage("look at \(folder)", { try fileSystem.exists(folder) }) else { return false }
        for name in try LogCopier.storage("list \(folder)", { try fileSystem.listDirectory(folder) }) where !name.hasPrefix(".") {
            _ = try device(named: name, in: folder)
            if try isKnown(Path.join(folder, name), fileSystem) { return true }
        }
        return false
    }

    /// The device a folder of `devices/` is named for.
    private static func device(named name: String, in folder: String) throws -> DeviceID {
        guard let id = DeviceID(parsing: name), id.description == name else {
            throw DeviceError(.notAStore, "\(Path.join(folder, name)) is not a device's folder (a device's folder is named by its 32-digit id)")
        }
        return id
    }

    /// A device is known once its log or its device.json came (a folder made for a copy that
    /// was then refused holds neither).
    private static func isKnown(_ copyFolder: String, _ fileSystem: any FileSystem) throws -> Bool {
        try LogCopier.storage("look into \(copyFolder)") {
            try fileSystem.exists(Path.join(copyFolder, "log")) || fileSystem.exists(Path.join(copyFolder, DeviceFile.name))
        }
    }

    public static func read(
        store: String, payloadCodec: (any BlockPayloadCodec)? = nil, fileSystem: any FileSystem = PosixFileSystem()
    ) throws -> StoreDevices {
        let logPath = Path.join(store, "log")
        guard let own = try identity(of: logPath, payloadCodec, fileSystem) else {
            throw DeviceError(.notAStore, "\(store) has no event log yet (no log/ with events or a header); open it as a store first")
        }
        let file = try DeviceFile.load(from: store, fileSystem: fileSystem)
        if let file, file.device != own {
            throw DeviceError(
                .notAStore,
                "\(Path.join(store, DeviceFile.name)) names device \(file.device), but the store's log is device \(own)'s: the file does not belong to this log")
        }
        let this = file ?? DeviceFile(map: own, device: own, name: nil)
        var copies: [Copy] = []
        var others: [DeviceID] = []
        var leftovers: [String] = []
        var damaged: [(device: DeviceID, reason: String)] = []
        let folder = Path.join(store, folderName)
        let names = try LogCopier.storage("list \(folder)") {
            try fileSystem.exists(folder) ? try fileSystem.listDirectory(folder).sorted() : []
        }
        for name in names where !name.hasPrefix(".") {  // a file manager's hidden files are not devices
            let id = try device(named: name, in: folder)
            let copyFolder = Path.join(folder, name)
            let log = Path.join(copyFolder, "log")
            if try isKnown(copyFolder, fileSystem) { others.append(id) }
            if try LogCopier.storage("look at \(log).partial", { try fileSystem.exists(log + ".partial") }) { leftovers.append(log + ".partial") }
            guard try LogCopier.storage("look at \(log)", { try fileSystem.exists(log) }) else { continue }
            let reader: LogReader
            let logID: [UInt8]?
            let last: UInt64
            let head: LogHead?
            do {
                reader = try LogCopier.storage("read the copy at \(log)") {
                    try LogReader(directory: log, fileSystem: fileSystem, payloadCodec: payloadCodec)
                }
                logID = try LogCopier.storage("read the copy at \(log)") { try reader.identity() }?.logID
                last = try LogCopier.storage("read the copy at \(log)") { try reader.lastSequence() }
                head = try LogCopier.storage("read the copy at \(log)") { try reader.head(at: last) }
            } catch let error as DeviceError where error.code == .refused {
                // Damage in one copy: the others are still read, and whoever reads this says
                // which (a store refuses to open until the copy is removed and synced again).
                damaged.append((id, error.message))
                continue
            }
            guard logID == id.bytes else {
                throw DeviceError(.notAStore, "\(log) holds the log of \(logID.map(hex) ?? "no device"), not of device \(id) its folder names")
            }
            let copyFile = try DeviceFile.load(from: copyFolder, fileSystem: fileSystem)
            if let copyFile, copyFile.device != id || copyFile.map != this.map {
                throw DeviceError(
                    .notAStore,
                    "\(Path.join(copyFolder, DeviceFile.name)) is device \(copyFile.device)'s of map \(copyFile.map); this folder is device \(id)'s of map \(this.map)")
            }
            guard let head else { throw DeviceError(.storage, "the copy at \(log) has no head at its last event \(last)") }
            copies.append(Copy(id: id, file: copyFile, logPath: log, head: head))
        }
        return StoreDevices(
            store: store, this: this, hasFile: file != nil, copies: copies, others: others, leftovers: leftovers, damaged: damaged)
    }

    /// The identity of the log in `path` as a device id, nil when it has no data file yet.
    static func identity(of path: String, _ payloadCodec: (any BlockPayloadCodec)?, _ fileSystem: any FileSystem) throws -> DeviceID? {
        guard try LogCopier.storage("look at \(path)", { try fileSystem.exists(path) }) else { return nil }
        let identity = try LogCopier.storage("read the log at \(path)") {
            try LogReader(directory: path, fileSystem: fileSystem, payloadCodec: payloadCodec).identity()
        }
        return try identity.map { try DeviceID(logID: $0.logID) }
    }

    /// Every device of the map this store knows, this one first, then the copies by id.
    public var all: [DeviceID] { [this.device] + copies.map(\.id) }
}
