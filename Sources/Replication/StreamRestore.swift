import BlobStore
import EventLog
import FileIO
import Foundation
import NATSClient
import VirtualTourist

/// Where a restore stops.
public enum RestorePoint: Sendable, Equatable {
    /// After this event.
    case sequence(UInt64)
    /// After the last event at or before this time.
    case time(LogTimestamp)
}

/// What a restore built.
public struct RestoreReport: Sendable, Equatable {
    public var events: UInt64 = 0
    public var head: LogHead?
    public var messages = 0
    public var photos = 0
    /// Photos the restored store keeps (its albums, and the retention window's) that the bucket
    /// did not have.
    public var missingPhotos = 0
    /// Places forgotten in the history, whose events are erased here as in the original.
    public var placesErased = 0
    /// The other devices of the map whose logs were restored beside this one's, as copies
    /// (a restore of one device of several), and their events.
    public var otherDevices = 0
    public var otherDeviceEvents: UInt64 = 0
    /// Devices the map's buckets name whose streams are not in the cluster (nothing shipped
    /// their log yet): the restored store lacks their events.
    public var devicesNotFound: [String] = []
    /// The streams the other devices' logs came from.
    public var otherStreams: [ReplicationStream] = []
    public var seconds = 0.0
    /// Of ``seconds``, the time to read and check the stream and write the log (before the
    /// store's open and the photos).
    public var logSeconds = 0.0
}

/// Builds a new store from a replication stream and its photo bucket (docs/REPLICATION.md,
/// "Restore"). Every message is checked against the head shipped with it; the log is written
/// beside the target as `<folder>.restoring` and renamed into place only when whole, so an
/// interrupted restore leaves nothing that looks like a store.
public enum StreamRestore {
    /// Builds the store at `folder` (new, or an empty folder) from `stream`, up to `point`.
    /// While a rewrite on the original replaces the stream, the stream is missing or holds only a
    /// prefix: the restore waits for the rewrite to finish, telling `waiting` how far it has come,
    /// and starts again if one began while it read.
    public static func restore(
        connection: NATSConnection, stream: ReplicationStream, to folder: String, at point: RestorePoint? = nil,
        progress: (@Sendable (UInt64, UInt64) -> Void)? = nil, waiting: (@Sendable (String) -> Void)? = nil,
        patience: Duration = .seconds(60)
    ) async throws -> RestoreReport {
        try checkTarget(folder)
        let jetStream = JetStream(connection)
        return try await StreamReplacement.reading(stream, jetStream: jetStream, patience: patience, progress: waiting) {
            try await restoreOnce(jetStream: jetStream, stream: stream, to: folder, at: point, progress: progress)
        }
    }

    private static func restoreOnce(
        jetStream: JetStream, stream: ReplicationStream, to folder: String, at point: RestorePoint?,
        progress: (@Sendable (UInt64, UInt64) -> Void)?
    ) async throws -> RestoreReport {
        let started = ContinuousClock.now
        let work = folder + ".restoring"
        let info = try await StreamReading.info(stream, jetStream: jetStream)
        // A replacement that began just before `info` would make a prefix look whole.
        if try await StreamReplacement.copyGoesPast(info.state.lastSequence, of: stream, jetStream: jetStream) {
            throw ReplicationError.rewriting("the stream \(stream.name) began to be rewritten as the restore started")
        }
        guard info.state.messages > 0 else {
            throw ReplicationError.invalid("the stream \(stream.name) holds no events yet; there is nothing to restore")
        }
        if FileManager.default.fileExists(atPath: work) {
            // Ours by its name: what an interrupted restore left.
            try? FileManager.default.removeItem(atPath: work)
        }
        var report = RestoreReport()
        do {
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
            let devices = try await devicesOfMap(jetStream: jetStream, stream: stream)
            if let devices, devices.devices.count > 1, case .sequence = point {
                throw ReplicationError.invalid(
                    "the stream \(stream.name) is one device's of a map of \(devices.devices.count) devices, whose events are numbered in each device's log:"
                        + " restore them to a time (--at 2026-11-28T10:00:00Z) rather than to an event number")
            }
            report = try await buildLog(
                jetStream: jetStream, stream: stream, info: info, into: Path.join(work, "log"), point: point, progress: progress)
            if let devices {
                try await restoreOtherDevices(of: devices, jetStream: jetStream, work: work, point: point, report: &report)
            }
            report.logSeconds = (ContinuousClock.now - started) / .seconds(1)
            try await fetchPhotos(jetStream: jetStream, stream: stream, work: work, report: &report)
            if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
            try FileManager.default.moveItem(atPath: work, toPath: folder)
            try PosixFileSystem().syncDirectory(Path.directory(of: folder))
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            if let error = error as? ReplicationError { throw error }
            throw ReplicationError.storage("the restore into \(folder) failed, and nothing was left there: \(error)")
        }
        report.seconds = (ContinuousClock.now - started) / .seconds(1)
        return report
    }

    /// The target must be new, or an empty folder.
    static func checkTarget(_ folder: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else { throw ReplicationError.invalid("\(folder) is a file; a restore needs a new folder") }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? ["?"]
        guard entries.isEmpty else {
            throw ReplicationError.invalid("\(folder) is not empty; a restore builds a new store and never merges into one")
        }
    }

    static func buildLog(
        jetStream: JetStream, stream: ReplicationStream, info: StreamInfo, into logPath: String, point: RestorePoint?,
        required: Bool = true, progress: (@Sendable (UInt64, UInt64) -> Void)?
    ) async throws -> RestoreReport {
        var report = RestoreReport()
        let end = info.state.lastSequence
        let total = try await lastEvent(jetStream: jetStream, stream: stream)
        var reading = StreamReading(jetStream: jetStream, stream: stream)
        var builder: LogBuilder? = nil
        var configuration = LogConfiguration.touristStore
        configuration.durability = .none  // block files are synced as they are written
        try await StreamReading.forEachMessage(jetStream: jetStream, stream: stream, from: info.state.firstSequence, through: end) {
            message in
            report.messages += 1
            let events = try reading.events(of: message)
            for event in events {
                if let point, isPast(event, point) { return false }
                if builder == nil, let identity = reading.identity {
                    builder = try LogBuilder(directory: logPath, identity: identity, configuration: configuration)
                }
                try builder!.add(event)
            }
            progress?(builder?.head.sequence ?? 0, total)
            return true
        }
        guard var builder else {
            if !required { return report }
            throw ReplicationError.invalid("the stream \(stream.name) holds no events before that point")
        }
        if case .sequence(let last) = point, builder.head.sequence < last {
            throw ReplicationError.invalid("the stream \(stream.name) ends at event \(builder.head.sequence), before \(last)")
        }
        let head = try builder.finish()
        report.events = head.sequence
        report.head = head
        return report
    }

    static func isPast(_ event: LogEvent, _ point: RestorePoint) -> Bool {
        switch point {
        case .sequence(let last): event.sequence > last
        case .time(let time): event.timestamp > time
        }
    }

    /// The last event the stream holds, from its last message's headers (0 when it holds none).
    static func lastEvent(jetStream: JetStream, stream: ReplicationStream) async throws -> UInt64 {
        try await Replicator.clusterCall("read the stream \(stream.name)") {
            try await StreamReading.lastBatch(of: stream, jetStream: jetStream)
        }?.summary.last ?? 0
    }

    /// Opens the restored store (its open replays the log and writes a snapshot on close), and
    /// fetches from the bucket every photo it keeps (``TouristStore/keptPhotos()``).
    private static func fetchPhotos(jetStream: JetStream, stream: ReplicationStream, work: String, report: inout RestoreReport) async throws {
        var options = StoreOptions()
        options.createIfMissing = false
        options.collectionInterval = nil
        let store = try await TouristStore.open(at: work, options: options)
        do {
            // A stream not yet rewritten after a forget (or written before rewrites existed)
            // holds the place whole: it is erased here as the original erased it.
            report.placesErased = try await store.eraseForgottenPlaces().count
            // Every photo the original keeps, those of the retention window too: time travel on
            // the copy shows what it shows on the original.
            let wanted = try store.keptPhotos().filter { (try? store.isPhotoStored($0)) != true }
            // The named device's bucket first, then each other device's: a photo is uploaded by
            // whichever store shipped the event that names it, into that device's bucket.
            var found: [PhotoBucket] = []
            for each in [stream] + report.otherStreams {
                if let bucket = try await PhotoBucket.open(jetStream: jetStream, stream: each) { found.append(bucket) }
            }
            let buckets = found
            // Eight at a time: each is a round trip or two to the bucket's leader.
            try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                var waiting = wanted.sorted(by: { $0.description < $1.description })[...]
                func startNext() {
                    guard let digest = waiting.popFirst() else { return }
                    group.addTask { try await PhotoBucket.get(digest, fromFirstOf: buckets) }
                }
                for _ in 0..<8 { startNext() }
                while let fetched = try await group.next() {
                    if let bytes = fetched {
                        try store.storePhoto(bytes).release()
                        report.photos += 1
                    } else {
                        report.missingPhotos += 1
                    }
                    startNext()
                }
            }
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}

/// A stream's photo bucket, read by digest; nil when the stream never shipped a photo.
struct PhotoBucket: Sendable {
    let store: ObjectStore

    static func open(jetStream: JetStream, stream: ReplicationStream) async throws -> PhotoBucket? {
        do {
            _ = try await jetStream.streamInfo("OBJ_" + stream.bucket)
        } catch let error as JetStreamAPIError where error.errorCode == JetStreamAPIError.streamNotFound {
            return nil
        }
        return PhotoBucket(store: try await ObjectStore.createOrLookUp(jetStream, bucket: stream.bucket))
    }

    /// The photo from the first of `buckets` that has it; nil when none does.
    static func get(_ digest: PhotoDigest, fromFirstOf buckets: [PhotoBucket]) async throws -> [UInt8]? {
        for bucket in buckets {
            if let bytes = try await bucket.get(digest) { return bytes }
        }
        return nil
    }

    /// The photo's bytes, checked against its digest; nil when the bucket does not have it.
    /// Failures of the cluster (a leader election after a server died) are retried for 90 s.
    func get(_ digest: PhotoDigest) async throws -> [UInt8]? {
        let bytes: [UInt8]
        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            do {
                bytes = try await store.get(digest.description)
                break
            } catch let error as ObjectStoreError where error == .notFound(bucket: store.bucket, name: digest.description) {
                return nil
            } catch where Replicator.isTransient(error) && !(error is ObjectStoreError) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
            } catch {
                throw ReplicationError.cluster("cannot fetch the photo \(digest) from the bucket \(store.bucket): \(error)")
            }
        }
        guard BlobDigest.of(bytes) == digest else {
            throw ReplicationError.chainMismatch("the bucket \(store.bucket) holds other bytes under the photo \(digest)")
        }
        return bytes
    }
}
