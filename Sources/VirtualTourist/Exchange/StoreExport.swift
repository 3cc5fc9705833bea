import BlobStore
import DeviceLogs
import EventLog
import Foundation

/// The lines of an export besides the events (docs/EXPORT.md).
public enum ExportLine {
    public static let format = "virtual-tourist-export"
    /// Version 1: one device's log. Version 2: the merged history of several devices, whose
    /// header lists them.
    public static let version = 2
    public static let oneDevice = 1

    public struct Header: Codable, Sendable {
        public var format: String
        public var version: Int
        public var events: UInt64
        public var last_seq: UInt64
        public var exported_at: String
        /// Version 2: the map, the exporting device, and every device the store knows (the
        /// exporting one first). Absent in version 1, which is unchanged byte for byte.
        public var map: String?
        public var device: String?
        public var devices: [Device]?
    }

    /// A device of an export of several devices, and how many of its log's events it holds.
    public struct Device: Codable, Sendable, Hashable {
        public var device: String
        public var name: String?
        public var events: UInt64
    }

    public struct Photo: Codable, Sendable {
        public var photo: String
        public var media_type: String
        public var base64: String
    }

    public struct Trailer: Codable, Sendable {
        public var end: Bool
        public var events: UInt64
        public var photos: Int
    }
}

/// What an export wrote.
public struct ExportSummary: Sendable, Hashable {
    public var events: UInt64 = 0
    public var photos = 0
    public var photoBytes: Int64 = 0
    /// Photos named by events whose blobs are gone (collected once no album used them).
    public var photosNotStored = 0
}

extension StoreReader {
    /// Writes the store as JSON lines (docs/EXPORT.md), one line per call of `write` (without
    /// its newline). Holds one batch of events and the set of photos written in memory.
    ///
    /// - Parameter progress: called now and then with (events written, events in all).
    public func export(
        includePhotos: Bool = true, now: LogTimestamp = SystemClock().now(),
        progress: ((UInt64, UInt64) -> Void)? = nil, write: (String) throws -> Void
    ) throws -> ExportSummary {
        var summary = ExportSummary()
        let blobs = includePhotos ? try blobStore() : nil
        var written = Set<PhotoDigest>()
        try write(EventJSON.encodeLine(try exportHeader(now: now)))
        try forEachEvent(doing: "the store cannot be exported") { recorded in
            if let blobs, case .photoDownloaded(let photo) = recorded.event, !written.contains(photo.digest) {
                written.insert(photo.digest)
                let bytes: [UInt8]?
                do { bytes = try blobs.get(photo.digest) } catch {
                    throw DomainError(.storage, "photo \(photo.digest) cannot be read", cause: error)
                }
                if let bytes {
                    try write(EventJSON.encodeLine(ExportLine.Photo(
                        photo: photo.digest.description, media_type: photo.mediaType, base64: Data(bytes).base64EncodedString())))
                    summary.photos += 1
                    summary.photoBytes += Int64(bytes.count)
                } else {
                    summary.photosNotStored += 1
                }
            }
            try write(EventJSON(recorded).encodedLine())
            summary.events += 1
            if summary.events % 4096 == 0 { progress?(summary.events, lastSequence) }
        }
        progress?(summary.events, lastSequence)
        try write(EventJSON.encodeLine(ExportLine.Trailer(end: true, events: summary.events, photos: summary.photos)))
        return summary
    }

    /// Version 1 for a store of one device; version 2, with its devices, for a store of several.
    private func exportHeader(now: LogTimestamp) throws -> ExportLine.Header {
        var header = ExportLine.Header(
            format: ExportLine.format, version: ExportLine.oneDevice, events: lastSequence, last_seq: lastSequence,
            exported_at: now.description)
        guard let (map, devices) = try mapAndDevices(), let this = devices.first else { return header }
        header.version = ExportLine.version
        header.map = map.description
        header.device = this.id.description
        header.devices = devices.map { ExportLine.Device(device: $0.id.description, name: $0.name, events: $0.events) }
        return header
    }
}
