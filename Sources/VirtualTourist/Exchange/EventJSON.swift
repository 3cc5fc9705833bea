import BlobStore
import DeviceLogs
import EventLog
import Foundation

/// The JSON form of a recorded event (docs/EXPORT.md): what `vt log --json` prints and
/// `vt import` reads.
///
/// ```swift
/// let line = try EventJSON(recorded).encodedLine()    // {"latitude":48.85,…,"seq":1,…,"type":"PinDropped"}
/// let back = try EventJSON.decode(line).recorded()    // == recorded
/// ```
///
/// One flat record with every field optional: each type reads the fields it needs and says
/// which one is missing or wrong.
public struct EventJSON: Codable, Hashable, Sendable {
    public struct Photo: Codable, Hashable, Sendable {
        public var id: String
        public var url: String
        public var title: String
        public var width: UInt32
        public var height: UInt32
        /// The credit, each left out when empty (and absent from exports made before credits).
        public var creator: String?
        public var licence: String?
        public var licence_url: String?
        public var page_url: String?
        public var date_taken: String?

        init(_ photo: ListedPhoto) {
            id = photo.remoteID
            url = photo.url
            title = photo.title
            width = photo.width
            height = photo.height
            creator = photo.creator.isEmpty ? nil : photo.creator
            licence = photo.licenceName.isEmpty ? nil : photo.licenceName
            licence_url = photo.licenceURL.isEmpty ? nil : photo.licenceURL
            page_url = photo.pageURL.isEmpty ? nil : photo.pageURL
            date_taken = photo.dateTaken.isEmpty ? nil : photo.dateTaken
        }

        var listed: ListedPhoto {
            ListedPhoto(
                remoteID: id, url: url, title: title, width: width, height: height, creator: creator ?? "",
                licenceName: licence ?? "", licenceURL: licence_url ?? "", pageURL: page_url ?? "", dateTaken: date_taken ?? "")
        }
    }

    public var seq: UInt64
    public var time: String
    public var time_us: Int64
    public var cause: UInt64?
    public var type: String
    public var pin: String?
    public var latitude: Double?
    public var longitude: Double?
    public var latitude_span: Double?
    public var longitude_span: Double?
    public var collection: UInt32?
    public var page: UInt32?
    public var pages: UInt32?
    public var per_page: UInt32?
    public var total: UInt64?
    public var photos: [Photo]?
    public var slot: UInt32?
    public var digest: String?
    public var bytes: UInt64?
    public var media_type: String?
    public var reason: String?
    public var old_collection: UInt32?
    public var new_collection: UInt32?
    /// PlaceForgotten: how many events were erased. Forgotten: the erased event's type (the
    /// payload's digest is in `digest`).
    public var erased_events: UInt64?
    public var forgotten_type: String?
    /// PhotoRemoved: which photo (absent for removals written before devices existed).
    public var photo_id: String?
    public var service: String?
    /// In a store of several devices: the device whose log holds the event, and its sequence
    /// number there (`seq` is then its position in the merged order).
    public var device: String?
    public var device_seq: UInt64?
    /// DeviceSeen: the device it names, how far, and that device's chain head there (hex).
    public var seen_device: String?
    public var seen_through: UInt64?
    public var seen_head: String?

    public init(_ recorded: RecordedEvent) {
        seq = recorded.sequence
        time = recorded.timestamp.description
        time_us = recorded.timestamp.microsecondsSinceEpoch
        cause = recorded.cause
        type = recorded.event.typeName
        pin = recorded.event.pin?.description
        device = recorded.origin?.device.description
        device_seq = recorded.origin?.sequence
        switch recorded.event {
        case .regionChanged(let region):
            latitude = region.center.latitude
            longitude = region.center.longitude
            latitude_span = region.latitudeSpan
            longitude_span = region.longitudeSpan
        case .pinDropped(_, let place), .pinDragged(_, let place):
            latitude = place.latitude
            longitude = place.longitude
        case .pinRemoved: break
        case .albumRequested(let request):
            collection = request.collection
            page = request.page
            per_page = request.perPage
            latitude = request.place.latitude
            longitude = request.place.longitude
        case .photosListed(let listing):
            collection = listing.collection
            page = listing.page
            pages = listing.pages
            total = listing.total
            photos = listing.photos.map(Photo.init)
        case .photoDownloaded(let photo):
            collection = photo.collection
            slot = photo.slot
            digest = photo.digest.description
            bytes = photo.byteCount
            media_type = photo.mediaType
        case .photoDownloadFailed(_, let collection, let slot, let reason):
            self.collection = collection
            self.slot = slot
            self.reason = reason
        case .albumRequestFailed(_, let collection, let reason):
            self.collection = collection
            self.reason = reason
        case .photoRemoved(_, let collection, let slot, let photo):
            self.collection = collection
            self.slot = slot
            photo_id = photo?.remoteID
            service = photo?.service
        case .collectionReplaced(_, let old, let new):
            old_collection = old
            new_collection = new
        case .placeForgotten(_, let erased):
            erased_events = erased
        case .forgotten(let forgotten):
            forgotten_type = forgotten.typeName
            digest = forgotten.digest.description
        case .deviceSeen(let seen):
            seen_device = seen.device.description
            seen_through = seen.through
            seen_head = seen.headHex
        }
    }

    /// The event back, with its device and number there when it has them (an export of several
    /// devices), or a ``DomainError`` `.invalidArgument` naming the missing or bad field.
    public func recorded() throws -> RecordedEvent {
        RecordedEvent(
            sequence: seq, timestamp: LogTimestamp(microsecondsSinceEpoch: time_us), cause: cause, event: try event(),
            origin: try origin())
    }

    private func origin() throws -> EventOrigin? {
        switch (device, device_seq) {
        case (nil, nil): return nil
        case (let named?, let number?):
            guard let id = DeviceID(parsing: named) else { throw Self.bad("device", "\"\(named.prefix(40))\" is not 32 hexadecimal digits") }
            guard number > 0 else { throw Self.bad("device_seq", "a device's events are numbered from 1") }
            return EventOrigin(device: id, sequence: number)
        case (nil, _): throw Self.bad("device", "\"device_seq\" comes with the device it counts in")
        case (_, nil): throw Self.bad("device_seq", "\"device\" comes with the event's number in that device's log")
        }
    }

    private func event() throws -> DomainEvent {
        switch type {
        case "RegionChanged":
            return .regionChanged(
                MapRegion(
                    center: try place(), latitudeSpan: try need(latitude_span, "latitude_span"),
                    longitudeSpan: try need(longitude_span, "longitude_span")))
        case "PinDropped": return .pinDropped(try pinID(), try place())
        case "PinDragged": return .pinDragged(try pinID(), try place())
        case "PinRemoved": return .pinRemoved(try pinID())
        case "AlbumRequested":
            return .albumRequested(
                AlbumRequest(
                    pin: try pinID(), collection: try need(collection, "collection"), page: try need(page, "page"),
                    perPage: try need(per_page, "per_page"), place: try place()))
        case "PhotosListed":
            let photos = try need(photos, "photos").map(\.listed)
            return .photosListed(
                PhotoListing(
                    pin: try pinID(), collection: try need(collection, "collection"), page: try need(page, "page"),
                    pages: try need(pages, "pages"), total: try need(total, "total"), photos: photos))
        case "PhotoDownloaded":
            let text = try need(digest, "digest")
            guard let parsed = BlobDigest(hex: text) else { throw Self.bad("digest", "\"\(text.prefix(70))\" is not 64 hexadecimal digits") }
            return .photoDownloaded(
                DownloadedPhoto(
                    pin: try pinID(), collection: try need(collection, "collection"), slot: try need(slot, "slot"),
                    digest: parsed, byteCount: try need(bytes, "bytes"), mediaType: try need(media_type, "media_type")))
        case "PhotoDownloadFailed":
            return .photoDownloadFailed(
                pin: try pinID(), collection: try need(collection, "collection"), slot: try need(slot, "slot"),
                reason: try need(reason, "reason"))
        case "AlbumRequestFailed":
            return .albumRequestFailed(
                pin: try pinID(), collection: try need(collection, "collection"), reason: try need(reason, "reason"))
        case "PhotoRemoved":
            if (photo_id == nil) != (service == nil) { throw Self.bad(photo_id == nil ? "photo_id" : "service", "a removed photo is named by both photo_id and service, or by neither") }
            return .photoRemoved(
                pin: try pinID(), collection: try need(collection, "collection"), slot: try need(slot, "slot"),
                photo: photo_id.map { PhotoIdentity(remoteID: $0, service: service ?? "") })
        case "CollectionReplaced":
            return .collectionReplaced(
                pin: try pinID(), oldCollection: try need(old_collection, "old_collection"),
                newCollection: try need(new_collection, "new_collection"))
        case "PlaceForgotten":
            return .placeForgotten(pin: try pinID(), erasedEvents: try need(erased_events, "erased_events"))
        case "Forgotten":
            let text = try need(digest, "digest")
            guard let parsed = BlobDigest(hex: text) else { throw Self.bad("digest", "\"\(text.prefix(70))\" is not 64 hexadecimal digits") }
            if let kind = forgotten_type, !DomainEvent.schemaTypeNames.contains(kind) {
                throw Self.bad("forgotten_type", "\"\(kind.prefix(40))\" is not an event type")
            }
            return .forgotten(ForgottenEvent(typeName: forgotten_type, digest: parsed))
        case "DeviceSeen":
            let named = try need(seen_device, "seen_device")
            guard let device = DeviceID(parsing: named) else { throw Self.bad("seen_device", "\"\(named.prefix(40))\" is not 32 hexadecimal digits") }
            let through = try need(seen_through, "seen_through")
            guard through > 0 else { throw Self.bad("seen_through", "a DeviceSeen names an event, from 1") }
            let head = try need(seen_head, "seen_head")
            guard let parsed = BlobDigest(hex: head) else { throw Self.bad("seen_head", "\"\(head.prefix(70))\" is not 64 hexadecimal digits") }
            return .deviceSeen(DeviceSeen(device: device, through: through, head: parsed.bytes))
        default:
            throw DomainError(
                .invalidArgument, "unknown event type \"\(type.prefix(40))\" (known: \(DomainEvent.typeNames.joined(separator: ", ")))")
        }
    }

    private func need<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw Self.bad(name, "missing") }
        return value
    }

    private func pinID() throws -> PinID {
        let text = try need(pin, "pin")
        guard let id = PinID(parsing: text) else { throw Self.bad("pin", "\"\(text.prefix(40))\" is not 16 hexadecimal digits") }
        return id
    }

    private func place() throws -> Coordinate {
        Coordinate(latitude: try need(latitude, "latitude"), longitude: try need(longitude, "longitude"))
    }

    private static func bad(_ field: String, _ problem: String) -> DomainError {
        DomainError(.invalidArgument, "field \"\(field)\": \(problem)")
    }

    /// One line of JSON, keys sorted, no newline.
    public func encodedLine() throws -> String { try Self.encodeLine(self) }

    /// Decodes one line, with a message that names the problem.
    public static func decode(_ line: some StringProtocol) throws -> EventJSON {
        try decodeLine(EventJSON.self, line)
    }

    /// Any value as one line of JSON with sorted keys (the house form of `--json`).
    public static func encodeLine(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decodeLine<T: Decodable>(_ type: T.Type, _ line: some StringProtocol) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(line.utf8))
        } catch let error as DecodingError {
            throw DomainError(.invalidArgument, describe(error))
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "" : "field \"\(keys.joined(separator: "."))\": "
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context))\"\(key.stringValue)\" is missing"
        case .typeMismatch(let type, let context): return "\(path(context))expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context))expected \(type), found null"
        case .dataCorrupted(let context): return path(context) + "not valid JSON (\(context.debugDescription))"
        @unknown default: return "not valid JSON"
        }
    }
}
