import BlobStore
import DeviceLogs
import EventLog
import FileIO
import Foundation

/// What an import built.
public struct ImportSummary: Sendable, Hashable {
    public var events: UInt64 = 0
    public var photos = 0
    /// Photos the final state shows whose bytes the export did not carry.
    public var missingPhotos = 0
    public var state: TouristState = TouristState()
    /// An export of several devices: each device's name (or short new id), this device first;
    /// empty for an export of one.
    public var devices: [String] = []
}

/// Builds a new store from an export (docs/EXPORT.md), line by line, checking every line
/// against the format and every event against the rules before it is appended (an export of
/// several devices: against the merged order, ``ImportedDevices``). On any problem it throws an
/// error naming the line, and ``abandon()`` removes what it built.
///
/// ```swift
/// let importer = try StoreImporter(folder: "new-store")
/// do {
///     for (number, line) in lines.enumerated() { try importer.consume(line, lineNumber: number + 1) }
///     let summary = try await importer.finish()
/// } catch { importer.abandon(); throw error }
/// ```
public final class StoreImporter {
    public let folder: String
    private let createdFolder: Bool
    private let fileSystem = PosixFileSystem()
    /// Version 1: the one log, appended to. Version 2: every device's log, built whole.
    private var log: EventLog? = nil
    private var devices: ImportedDevices? = nil
    private let blobs: BlobStore
    private var state = TouristState()
    private var sawHeader = false
    private var sawTrailer = false
    private var lastTime: LogTimestamp? = nil
    private var pending: [(payload: [UInt8], time: LogTimestamp)] = []
    private var leases: [BlobLease] = []
    private var photos = 0
    private var closed = false

    /// Creates the store's folders. `folder` must not exist, or be an empty folder.
    public init(folder: String) throws {
        self.folder = folder
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory)
        if exists {
            guard isDirectory.boolValue else { throw DomainError(.invalidArgument, "\(folder) is a file; import needs a new folder") }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? ["?"]
            guard entries.isEmpty else {
                throw DomainError(.invalidArgument, "\(folder) is not empty; import builds a new store and never merges into one")
            }
        }
        createdFolder = !exists
        do {
            try fileSystem.createDirectoryDurably(folder)
            blobs = try BlobStore(directory: Path.join(folder, "blobs"), fileSystem: fileSystem)
        } catch {
            Self.remove(folder, wholeFolder: !exists)
            throw TouristStore.storageError(error, "cannot create a store in \(folder)")
        }
    }

    /// Reads one line of the export (without its newline).
    public func consume(_ line: some StringProtocol, lineNumber: Int) throws {
        do {
            try consume(line)
        } catch let error as DomainError {
            throw DomainError(error.code, "line \(lineNumber): \(error.message)", cause: error.cause)
        }
    }

    private func consume(_ line: some StringProtocol) throws {
        if line.allSatisfy(\.isWhitespace) { return }
        if sawTrailer { throw DomainError(.invalidArgument, "there is more after the end line") }
        guard sawHeader else {
            let header = try EventJSON.decodeLine(ExportLine.Header.self, line)
            guard header.format == ExportLine.format else {
                throw DomainError(.invalidArgument, "this is not a Virtual Tourist export (format \"\(header.format.prefix(40))\")")
            }
            guard header.version <= ExportLine.version else {
                throw DomainError(.invalidArgument, "the export is version \(header.version); this program reads up to \(ExportLine.version)")
            }
            if header.version == ExportLine.oneDevice {
                var configuration = LogConfiguration.touristStore
                configuration.durability = .none  // one sync at the end; a failed import is removed anyway
                log = try storage("cannot create a store in \(folder)") {
                    try EventLog.open(at: Path.join(folder, "log"), configuration: configuration, fileSystem: fileSystem)
                }
            } else {
                let devices = try ImportedDevices(header: header, store: folder, fileSystem: fileSystem)
                state = TouristState(localDevice: devices.local)
                self.devices = devices
            }
            sawHeader = true
            return
        }
        let kind = try EventJSON.decodeLine(LineKind.self, line)
        if kind.type != nil {
            try append(try EventJSON.decode(line).recorded())
        } else if kind.photo != nil {
            try storePhoto(try EventJSON.decodeLine(ExportLine.Photo.self, line))
        } else if kind.end != nil {
            let trailer = try EventJSON.decodeLine(ExportLine.Trailer.self, line)
            guard trailer.events == state.sequence, trailer.photos == photos else {
                throw DomainError(
                    .invalidArgument,
                    "the end line counts \(trailer.events) events and \(trailer.photos) photos, but the file held \(state.sequence) and \(photos)")
            }
            sawTrailer = true
        } else {
            throw DomainError(.invalidArgument, "the line is neither an event (no \"type\"), a photo nor the end line")
        }
    }

    /// Which of the three kinds a line is.
    private struct LineKind: Decodable {
        var type: String?
        var photo: String?
        var end: Bool?
    }

    private func storePhoto(_ line: ExportLine.Photo) throws {
        guard let digest = BlobDigest(hex: line.photo) else {
            throw DomainError(.invalidArgument, "field \"photo\": not a SHA-256 digest")
        }
        guard let data = Data(base64Encoded: line.base64) else {
            throw DomainError(.invalidArgument, "photo \(digest): its base64 is not valid")
        }
        let bytes = [UInt8](data)
        guard BlobDigest.of(bytes) == digest else {
            throw DomainError(.invalidArgument, "photo \(digest): its bytes hash to \(BlobDigest.of(bytes)), not to its name")
        }
        do { leases.append(try blobs.put(bytes)) } catch {
            throw DomainError(.invalidArgument, "photo \(digest) cannot be stored: \(error)", cause: error)
        }
        photos += 1
    }

    /// Events the export showed as forgotten: sequence → what each keeps.
    private var forgotten: [UInt64: [UInt8]] = [:]

    private func append(_ read: RecordedEvent) throws {
        if read.origin != nil && devices == nil {
            throw DomainError(
                .invalidArgument, "event \(read.sequence) names a device, but the header is version 1, of a store of one device")
        }
        let recorded = try devices?.take(read) ?? read
        let expected = state.sequence + 1
        guard recorded.sequence == expected else {
            throw DomainError(.invalidArgument, "event \(recorded.sequence) comes where event \(expected) should")
        }
        if let lastTime, recorded.timestamp < lastTime {
            throw DomainError(.invalidArgument, "event \(recorded.sequence)'s time \(recorded.timestamp) is before the previous event's")
        }
        if let cause = recorded.cause, cause >= recorded.sequence || cause == 0 {
            throw DomainError(.invalidArgument, "event \(recorded.sequence) names event \(cause) as its cause, which is not earlier")
        }
        // Several devices: an event the rules pass over is a true part of a merged history,
        // and the fold passes over it again (docs/EXPORT.md, "Importing several devices").
        if devices == nil, let problem = state.problem(with: recorded.event) {
            throw DomainError(problem.code, "event \(recorded.sequence) (\(recorded.event.typeName)) breaks the rules: \(problem.message)")
        }
        state.apply(recorded)
        lastTime = recorded.timestamp
        if devices != nil { return }
        if case .forgotten = recorded.event {
            // Appended as a stand-in, erased in `finish`: the new log's chain is its own, so the
            // erased event's digest is the stand-in's (docs/EXPORT.md).
            forgotten[recorded.sequence] = EventCodec.keptOnErase(recorded.event)
        }
        pending.append((EventCodec.encode(recorded.event, cause: recorded.cause), recorded.timestamp))
        if pending.count >= 4096 { try flush() }
    }

    private func flush() throws {
        guard !pending.isEmpty, let log else { return }
        do {
            try log.append(contentsOf: pending.map(\.payload), timestamps: pending.map(\.time))
        } catch {
            throw TouristStore.storageError(error, "the imported events cannot be appended")
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Checks the file was whole, makes everything durable, and opens the new store once to
    /// confirm its state and write its first snapshot.
    public func finish() async throws -> ImportSummary {
        guard sawHeader else { throw DomainError(.invalidArgument, "the file is empty: it has no export header") }
        guard sawTrailer else {
            throw DomainError(.invalidArgument, "the file ends before its end line: the export was cut off after event \(state.sequence)")
        }
        try flush()
        if let log {
            do {
                try await log.sync()
                if !forgotten.isEmpty { try log.erase(forgotten) }
                try log.close()
            } catch {
                throw TouristStore.storageError(error, "the imported events cannot be made durable")
            }
        }
        try devices?.finish()
        closed = true
        var options = StoreOptions()
        options.createIfMissing = false
        options.collectionInterval = nil
        let store = try await TouristStore.open(at: folder, options: options)
        let opened = store.state
        try await store.close()
        leases.forEach { $0.release() }
        guard opened == state else {
            throw DomainError(.storage, "the new store's state differs from the imported events' (a bug: please report it)")
        }
        var summary = ImportSummary(events: state.sequence, photos: photos, state: state)
        summary.devices = devices?.names ?? []
        summary.missingPhotos = try state.referencedDigests.count { try !blobs.contains($0) }
        return summary
    }

    /// Removes what the import built (after a failure).
    public func abandon() {
        if !closed {
            try? log?.close()
            devices?.abandon()
        }
        closed = true
        leases.forEach { $0.release() }
        Self.remove(folder, wholeFolder: createdFolder)
    }

    private static func remove(_ folder: String, wholeFolder: Bool) {
        if wholeFolder {
            try? FileManager.default.removeItem(atPath: folder)
        } else {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                try? FileManager.default.removeItem(atPath: Path.join(folder, entry))
            }
        }
    }

    private func storage<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw TouristStore.storageError(error, doing) }
    }
}
