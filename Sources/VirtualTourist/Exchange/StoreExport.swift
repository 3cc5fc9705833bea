import BlobStore
import EventLog
import Foundation

/// The lines of an export besides the events (docs/EXPORT.md).
public enum ExportLine {
    public static let format = "virtual-tourist-export"
    public static let version = 1

    public struct Header: Codable, Sendable {
        public var format: String
        public var version: Int
        public var events: UInt64
        public var last_seq: UInt64
        public var exported_at: String
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
        try write(EventJSON.encodeLine(ExportLine.Header(
            format: ExportLine.format, version: ExportLine.version, events: lastSequence, last_seq: lastSequence,
            exported_at: now.description)))
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
}
