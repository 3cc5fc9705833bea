import BlobStore
import DeviceLogs
import EventLog
import FileIO
import HistoryProofs

/// What one sync between two store folders did (docs/DEVICES.md, "Commands").
public struct SyncReport: Sendable {
    /// The logs this store took (or found it had), and the ones it gave.
    public var taken: [LogCopier.Report] = []
    public var given: [LogCopier.Report] = []
    /// Photos copied each way.
    public var photosTaken = 0
    public var photosGiven = 0
    /// Why nothing was given, when the other store is open in another program (its next sync
    /// takes what it lacks).
    public var notGiven: String?
    /// Logs refused, each with its reason (the device and the event are named); the rest synced.
    public var refused: [String] = []
    /// Places whose forget arrived in this store and in the other one (each store finishes them
    /// when it next opens: ``StoreSync/finishForgets(in:options:)``).
    public var forgetsTaken: [PinID] = []
    public var forgetsGiven: [PinID] = []
    /// The head of this device's log it signed for the other devices (nil: its log has no
    /// events yet), or why it could not sign it (the sync went on without).
    public var signedHead: SignedHead?
    public var notSigned: String?

    public var eventsTaken: UInt64 { taken.reduce(0) { $0 + $1.copied } }
    public var eventsGiven: UInt64 { given.reduce(0) { $0 + $1.copied } }
    /// Events about forgotten places that came whole and were copied erased, both ways.
    public var erasedOnArrival: UInt64 { (taken + given).reduce(0) { $0 + $1.erasedOnArrival } }
}

/// Sync between two store folders of one map, and the making of a new device (docs/DEVICES.md).
/// Each side's log is locked while its copies are written (it is how a store says it is open),
/// so a store open in another program is read, never written.
public enum StoreSync {
    /// Takes what `store` lacks from `other` (every log the other has: its own and its copies,
    /// and the photos their state shows), then gives `other` what it lacks, unless another
    /// program holds it. Idempotent; interrupted anywhere, the next sync finishes the work.
    ///
    /// - Throws: ``DomainError`` `.notAStore` when either folder is not a store; `.invalidArgument`
    ///   when they belong to different maps or are the same device; `.storage` when `store` is
    ///   open in another program or the disk fails.
    public static func sync(store: String, with other: String, options: StoreOptions = StoreOptions()) throws -> SyncReport {
        try sync(store: store, with: other, options: options, fileSystem: PosixFileSystem())
    }

    /// The same, through `fileSystem` (tests: one that fails a chosen call).
    static func sync(store: String, with other: String, options: StoreOptions, fileSystem: any FileSystem) throws -> SyncReport {
        try refuseWhileForgetting(store, fileSystem)
        try refuseWhileForgetting(other, fileSystem)
        let ours = try devices(of: store, fileSystem)
        let theirs = try devices(of: other, fileSystem)
        guard ours.this.map == theirs.this.map else {
            throw DomainError(
                .invalidArgument,
                "\(other) is a device of map \(theirs.this.map), and \(store) of map \(ours.this.map): only devices of one map sync (make one with vt clone)")
        }
        guard ours.this.device != theirs.this.device else {
            throw DomainError(.invalidArgument, "\(other) is this same device (\(ours.this.device)), not another one of its map")
        }
        var report = SyncReport()
        let ourLock = try lock(store, fileSystem, "sync into it")
        defer { ourLock.release() }
        if !ours.hasFile { try save(ours.this, in: store, fileSystem) }
        do { report.signedHead = try signOwnHead(of: store, map: ours.this.map, fileSystem) } catch let error as DomainError {
            report.notSigned = error.message
        }
        report.taken = try copy(
            from: theirs, into: store, refusing: ours.this.device, options, fileSystem, refused: &report.refused, forgets: &report.forgetsTaken)
        report.photosTaken = try copyPhotos(from: other, into: store, fileSystem)

        let theirLock: any HeldLock
        do { theirLock = try lock(other, fileSystem, "give it this device's events") } catch let error as DomainError {
            report.notGiven = error.message
            return report
        }
        defer { theirLock.release() }
        let now = try devices(of: store, fileSystem)
        if !theirs.hasFile { try save(theirs.this, in: other, fileSystem) }
        report.given = try copy(
            from: now, into: other, refusing: theirs.this.device, options, fileSystem, refused: &report.refused, forgets: &report.forgetsGiven)
        report.photosGiven = try copyPhotos(from: store, into: other, fileSystem)
        return report
    }

    /// A new device of `source`'s map in `destination` (``DeviceClone``), named `name`.
    public static func clone(
        from source: String, to destination: String, name: String?, options: StoreOptions = StoreOptions(),
        progress: (@Sendable (DeviceClone.Step) -> Void)? = nil
    ) throws -> DeviceClone.Report {
        try clone(from: source, to: destination, name: name, options: options, fileSystem: PosixFileSystem(), progress: progress)
    }

    /// The same, through `fileSystem` (tests: a simulated disk).
    static func clone(
        from source: String, to destination: String, name: String?, options: StoreOptions, fileSystem: any FileSystem,
        progress: (@Sendable (DeviceClone.Step) -> Void)? = nil
    ) throws -> DeviceClone.Report {
        try refuseWhileForgetting(source, fileSystem)
        do {
            return try DeviceClone.clone(
                from: source, to: destination, name: name, configuration: options.log, fileSystem: fileSystem, progress: progress)
        } catch let error as DeviceError {
            throw domainError(error)
        }
    }

    /// A forget cut short, or one that arrived and is not finished, leaves the place's events
    /// whole until the store is next opened, which finishes it: they must not be copied to
    /// another device meanwhile.
    private static func refuseWhileForgetting(_ store: String, _ fileSystem: any FileSystem) throws {
        guard try hasForgetsToFinish(store, fileSystem) else { return }
        throw DomainError(
            .invalidArgument,
            "a forget is under way in \(store) (it was cut short, or it arrived from another device); open that store once for a change (vt sync does, and so does vt gc --dry-run --store \(store)) so that it finishes, then sync")
    }

    static func hasForgetsToFinish(_ store: String, _ fileSystem: any FileSystem) throws -> Bool {
        try fileSystem.exists(Path.join(store, TouristStore.forgetMarkerName))
            || fileSystem.exists(Path.join(store, ForgottenPlaces.arrivedName))
    }

    /// Finishes the forgets that are under way in `store` (cut short, or arrived with a sync) by
    /// opening it, which finishes them before anything reads it. False when there were none.
    ///
    /// - Throws: ``DomainError`` `.storage` when another program holds the store (it finished
    ///   them when it opened) or the disk fails.
    public static func finishForgets(in store: String, options: StoreOptions = StoreOptions()) async throws -> Bool {
        try await finishForgets(in: store, options: options, fileSystem: PosixFileSystem())
    }

    static func finishForgets(in store: String, options: StoreOptions, fileSystem: any FileSystem) async throws -> Bool {
        guard try hasForgetsToFinish(store, fileSystem) else { return false }
        var options = options
        options.collectionInterval = nil
        let opened = try await TouristStore.open(at: store, options: options, fileSystem: fileSystem)
        try await opened.close()
        return true
    }

    /// This store's devices (``StoreDevices``).
    public static func devices(of store: String) throws -> StoreDevices { try devices(of: store, PosixFileSystem()) }

    /// Names this device (its `device.json`).
    public static func rename(store: String, to name: String) throws -> DeviceFile {
        if let problem = DeviceFile.problem(withName: name) { throw DomainError(.invalidArgument, problem) }
        let fileSystem = PosixFileSystem()
        var file = try devices(of: store, fileSystem).this
        file.name = name
        try save(file, in: store, fileSystem)
        return file
    }

    static func devices(of store: String, _ fileSystem: any FileSystem) throws -> StoreDevices {
        do { return try StoreDevices.read(store: store, payloadCodec: EventCodec.blockCodec, fileSystem: fileSystem) } catch let error as DeviceError {
            throw domainError(error)
        }
    }

    /// Takes `store`'s log's writer lock (as an open store holds it), or says who holds it.
    private static func lock(_ store: String, _ fileSystem: any FileSystem, _ doing: String) throws -> any HeldLock {
        do { return try EventLog.writerLock(of: Path.join(store, "log"), fileSystem: fileSystem) } catch let error as LogError {
            if error.code == .locked {
                throw DomainError(.storage, "\(store) is open in another program, so this sync cannot \(doing): \(error.message)", cause: error)
            }
            throw DomainError(.storage, "cannot open the log of \(store): \(error.message)", cause: error)
        }
    }

    /// Copies every log `from` holds (its own and its copies) into `store`'s copies, except
    /// `own`; a log that is refused is named in `refused` and the others go on. Any other
    /// failure (the disk) stops the sync: what was copied so far stays, whole.
    /// Events about places forgotten in `store` are copied erased, and forgets new to it are
    /// recorded in its `forget.arrived` first (and in `forgets`).
    private static func copy(
        from source: StoreDevices, into store: String, refusing own: DeviceID, _ options: StoreOptions, _ fileSystem: any FileSystem,
        refused: inout [String], forgets: inout [PinID]
    ) throws -> [LogCopier.Report] {
        let forgotten = ForgottenPlaces(store: store, fileSystem: fileSystem)
        defer { forgets = forgotten.arrived }
        // Each log, and the signed head of its device that the source holds beside it.
        var logs: [(DeviceFile, String, isOwn: Bool)] = [(source.this, Path.join(source.store, "log"), true)]
        logs += source.copies.map { ($0.file ?? DeviceFile(map: source.this.map, device: $0.id, name: nil), $0.logPath, false) }
        func offeredHead(_ log: String) -> String { Path.join(Path.directory(of: log), SignedHead.fileName) }
        var reports: [LogCopier.Report] = []
        for (device, reason) in source.damaged where device != own {
            refused.append("device \(device): its copy in \(source.store) does not verify, so nothing of it was taken: \(reason)")
        }
        for (file, path, isOwn) in logs where file.device != own {
            do {
                let folder = StoreDevices.folder(store: store, device: file.device)
                try fileSystem.createDirectoryDurably(Path.directory(of: folder))
                try fileSystem.createDirectoryDurably(folder)
                let head = try checkSignedHeads(
                    of: file, log: path, offered: offeredHead(path), copyFolder: folder, store: store, options.log, fileSystem)
                if let copied = try LogCopier.update(
                    copy: Path.join(folder, "log"), from: path, refusing: own, configuration: options.log, isDevicesOwnLog: isOwn,
                    arrivals: forgotten.arrival, fileSystem: fileSystem)
                {
                    reports.append(copied)
                }
                try keep(head, inCopy: folder, fileSystem)
                try file.save(in: folder, fileSystem: fileSystem)
            } catch let error as DeviceError where error.code == .refused || error.code == .notAStore {
                refused.append("device \(file.device)\(file.name.map { " (\($0))" } ?? ""): \(error)")
                // A folder made for a copy that never came is no device.
                let folder = StoreDevices.folder(store: store, device: file.device)
                if (try? fileSystem.listDirectory(folder))?.isEmpty == true { try? fileSystem.removeDirectory(folder) }
            } catch let error as DeviceError {
                throw StoreSync.domainError(error)
            }
        }
        return reports
    }

    /// Copies into `store` the photos its merged state shows that it does not have and `source` does.
    private static func copyPhotos(from source: String, into store: String, _ fileSystem: any FileSystem) throws -> Int {
        let sourceFolder = Path.join(source, "blobs")
        guard try fileSystem.exists(sourceFolder) else { return 0 }
        let from = try BlobStore(directory: sourceFolder, fileSystem: fileSystem)
        let into = try BlobStore(directory: Path.join(store, "blobs"), fileSystem: fileSystem)
        // Listing both folders costs far less than the fold that says which photos are wanted.
        let missing = Set(try from.storedBlobs().map(\.digest)).subtracting(try into.storedBlobs().map(\.digest))
        guard !missing.isEmpty, let history = try MergedHistory.open(store: store, fileSystem: fileSystem) else { return 0 }
        let wanted = try history.state(at: history.count).referencedDigests.intersection(missing)
        var copied = 0
        for digest in wanted.sorted(by: { $0.description < $1.description }) {
            guard let bytes = try from.get(digest), BlobDigest.of(bytes) == digest else { continue }
            try into.put(bytes).release()
            copied += 1
        }
        return copied
    }

    private static func save(_ file: DeviceFile, in store: String, _ fileSystem: any FileSystem) throws {
        do { try file.save(in: store, fileSystem: fileSystem) } catch let error as DeviceError { throw domainError(error) }
    }

    static func domainError(_ error: DeviceError) -> DomainError {
        let code: DomainError.Code = switch error.code {
        case .invalidArgument: .invalidArgument
        case .notAStore: .notAStore
        case .refused: .invalidArgument
        case .storage: .storage
        }
        return DomainError(code, error.message, cause: error)
    }
}
