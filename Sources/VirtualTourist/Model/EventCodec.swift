import BlobStore
import DeviceLogs
import EventLog
import SwiftProtobuf

/// Maps domain events to the log's payloads and back: each payload is one
/// `virtual_tourist.v1.Envelope` in protobuf's binary format.
///
/// ```swift
/// let bytes = EventCodec.encode(.pinRemoved(pin), cause: nil)
/// let event = try EventCodec.decode(logEvent)       // RecordedEvent
/// ```
///
/// Decoding is where old schema versions are upcast to today's events (docs/EVENTS.md); today
/// there is only version 1. Cost: one pass over the payload, no copy of it.
public enum EventCodec {
    /// The schema version this code writes.
    public static let schemaVersion: UInt32 = 1

    public static func encode(_ event: DomainEvent, cause: UInt64?) -> [UInt8] {
        var envelope = VirtualTourist_V1_Envelope()
        envelope.schemaVersion = schemaVersion
        envelope.cause = cause ?? 0
        envelope.event = message(for: event)
        // Encoding a message we built cannot fail: every field is set from valid Swift values.
        return try! envelope.serializedBytes()
    }

    /// Decodes a log event. Throws ``DomainError/Code/undecodableEvent`` naming the sequence
    /// when the payload is not an envelope, holds no known event, or is from a newer schema.
    ///
    /// Plain, current envelopes go straight to domain values (``EventWireDecoder``); anything
    /// else takes the general path through swift-protobuf's generated messages.
    public static func decode(_ logEvent: LogEvent) throws -> RecordedEvent {
        if logEvent.isErased {
            return RecordedEvent(
                sequence: logEvent.sequence, timestamp: logEvent.timestamp, cause: nil,
                event: .forgotten(ForgottenEvent(
                    typeName: typeName(kept: Array(logEvent.keptBytes!)), digest: BlobDigest(bytes: logEvent.erasedDigest!)!)))
        }
        if let (cause, event) = EventWireDecoder.decode(logEvent.payload) {
            return RecordedEvent(sequence: logEvent.sequence, timestamp: logEvent.timestamp, cause: cause, event: event)
        }
        return try decodeGenerally(logEvent)
    }

    /// The general path: swift-protobuf's full decoding, then the mapping to domain values.
    static func decodeGenerally(_ logEvent: LogEvent) throws -> RecordedEvent {
        func fail(_ why: String, _ cause: (any Error)? = nil) -> DomainError {
            DomainError(.undecodableEvent, "event \(logEvent.sequence) cannot be decoded: \(why)", cause: cause)
        }
        let envelope: VirtualTourist_V1_Envelope
        do {
            envelope = try VirtualTourist_V1_Envelope(serializedBytes: PayloadBytes(logEvent.payload))
        } catch {
            throw fail("it is not a Virtual Tourist event envelope", error)
        }
        guard envelope.schemaVersion >= 1 else { throw fail("it has no schema version") }
        guard envelope.schemaVersion <= schemaVersion else {
            throw fail("it was written with schema version \(envelope.schemaVersion); this program reads up to \(schemaVersion)")
        }
        guard let payload = envelope.event else { throw fail("it holds no event this program knows") }
        return RecordedEvent(
            sequence: logEvent.sequence, timestamp: logEvent.timestamp,
            cause: envelope.cause == 0 ? nil : envelope.cause, event: try event(from: payload, fail))
    }

    /// The field number of the event an envelope holds (its `oneof` case: 10 for RegionChanged
    /// … 22 for DeviceSeen), read from the envelope's top-level fields without decoding
    /// them; nil when the bytes are not an envelope read so simply (then decode them).
    static func eventField(of payload: ArraySlice<UInt8>) -> Int? {
        payload.withUnsafeBytes { bytes -> Int? in
            var cursor = RawWire(bytes)
            while let (field, wireType) = cursor.tag() {
                if field >= Self.firstEventField { return wireType == 2 ? Int(field) : nil }
                if wireType == 2 {
                    guard cursor.lengthDelimited() != nil else { return nil }
                } else if !cursor.skip(wireType) {
                    return nil
                }
            }
            return nil
        }
    }

    /// What an erased event keeps (docs/EVENTS.md, "Forgetting a place"): one byte, its type's
    /// field number in the envelope's `oneof`.
    public static func keptOnErase(_ event: DomainEvent) -> [UInt8] {
        if case .forgotten(let forgotten) = event {
            return forgotten.typeName.map { keptOnErase(typeName: $0) } ?? []
        }
        return keptOnErase(typeName: event.typeName)
    }

    private static func keptOnErase(typeName: String) -> [UInt8] {
        guard let index = DomainEvent.schemaTypeNames.firstIndex(of: typeName) else { return [] }
        return [UInt8(10 + index)]
    }

    /// The type name an erased event kept, if it is one this program knows.
    static func typeName(kept: [UInt8]) -> String? {
        guard kept.count == 1, kept[0] >= 10, Int(kept[0]) - 10 < DomainEvent.schemaTypeNames.count else { return nil }
        return DomainEvent.schemaTypeNames[Int(kept[0]) - 10]
    }

    private static func message(for event: DomainEvent) -> VirtualTourist_V1_Envelope.OneOf_Event? {
        switch event {
        case .regionChanged(let region):
            return .regionChanged(.with {
                $0.centerLatitude = region.center.latitude
                $0.centerLongitude = region.center.longitude
                $0.spanLatitude = region.latitudeSpan
                $0.spanLongitude = region.longitudeSpan
            })
        case .pinDropped(let pin, let place):
            return .pinDropped(.with { $0.pin = pin.rawValue; $0.latitude = place.latitude; $0.longitude = place.longitude })
        case .pinDragged(let pin, let place):
            return .pinDragged(.with { $0.pin = pin.rawValue; $0.latitude = place.latitude; $0.longitude = place.longitude })
        case .pinRemoved(let pin):
            return .pinRemoved(.with { $0.pin = pin.rawValue })
        case .albumRequested(let request):
            return .albumRequested(.with {
                $0.pin = request.pin.rawValue
                $0.collection = request.collection
                $0.page = request.page
                $0.perPage = request.perPage
                $0.latitude = request.place.latitude
                $0.longitude = request.place.longitude
            })
        case .photosListed(let listing):
            return .photosListed(.with {
                $0.pin = listing.pin.rawValue
                $0.collection = listing.collection
                $0.page = listing.page
                $0.pages = listing.pages
                $0.total = listing.total
                $0.photos = listing.photos.map(message(for:))
            })
        case .photoDownloaded(let photo):
            return .photoDownloaded(.with {
                $0.pin = photo.pin.rawValue
                $0.collection = photo.collection
                $0.slot = photo.slot
                $0.sha256 = Data(photo.digest.bytes)
                $0.byteCount = photo.byteCount
                $0.mediaType = photo.mediaType
            })
        case .photoDownloadFailed(let pin, let collection, let slot, let reason):
            return .photoDownloadFailed(.with {
                $0.pin = pin.rawValue; $0.collection = collection; $0.slot = slot; $0.reason = reason
            })
        case .albumRequestFailed(let pin, let collection, let reason):
            return .albumRequestFailed(.with { $0.pin = pin.rawValue; $0.collection = collection; $0.reason = reason })
        case .photoRemoved(let pin, let collection, let slot, let photo):
            return .photoRemoved(.with {
                $0.pin = pin.rawValue; $0.collection = collection; $0.slot = slot
                $0.remoteID = photo?.remoteID ?? ""; $0.service = photo?.service ?? ""
            })
        case .collectionReplaced(let pin, let old, let new):
            return .collectionReplaced(.with { $0.pin = pin.rawValue; $0.oldCollection = old; $0.newCollection = new })
        case .placeForgotten(let pin, let erased):
            return .placeForgotten(.with { $0.pin = pin.rawValue; $0.erasedEvents = erased })
        case .deviceSeen(let seen):
            return .deviceSeen(.with { $0.device = Data(seen.device.bytes); $0.through = seen.through; $0.head = Data(seen.head) })
        case .forgotten:
            // A stand-in with no event: only an import writes it, and erases it at once.
            return nil
        }
    }

    static func message(for photo: ListedPhoto) -> VirtualTourist_V1_ListedPhoto {
        .with {
            $0.remoteID = photo.remoteID
            $0.url = photo.url
            $0.title = photo.title
            $0.width = photo.width
            $0.height = photo.height
            $0.creator = photo.creator
            $0.licenceName = photo.licenceName
            $0.licenceURL = photo.licenceURL
            $0.pageURL = photo.pageURL
            $0.dateTaken = photo.dateTaken
        }
    }

    static func photo(from message: VirtualTourist_V1_ListedPhoto) -> ListedPhoto {
        ListedPhoto(
            remoteID: message.remoteID, url: message.url, title: message.title, width: message.width,
            height: message.height, creator: message.creator, licenceName: message.licenceName,
            licenceURL: message.licenceURL, pageURL: message.pageURL, dateTaken: message.dateTaken)
    }

    private static func event(
        from payload: VirtualTourist_V1_Envelope.OneOf_Event, _ fail: (String, (any Error)?) -> DomainError
    ) throws -> DomainEvent {
        switch payload {
        case .regionChanged(let m):
            return .regionChanged(MapRegion(
                center: Coordinate(latitude: m.centerLatitude, longitude: m.centerLongitude),
                latitudeSpan: m.spanLatitude, longitudeSpan: m.spanLongitude))
        case .pinDropped(let m):
            return .pinDropped(PinID(m.pin), Coordinate(latitude: m.latitude, longitude: m.longitude))
        case .pinDragged(let m):
            return .pinDragged(PinID(m.pin), Coordinate(latitude: m.latitude, longitude: m.longitude))
        case .pinRemoved(let m):
            return .pinRemoved(PinID(m.pin))
        case .albumRequested(let m):
            return .albumRequested(AlbumRequest(
                pin: PinID(m.pin), collection: m.collection, page: m.page, perPage: m.perPage,
                place: Coordinate(latitude: m.latitude, longitude: m.longitude)))
        case .photosListed(let m):
            return .photosListed(PhotoListing(
                pin: PinID(m.pin), collection: m.collection, page: m.page, pages: m.pages, total: m.total,
                photos: m.photos.map(photo(from:))))
        case .photoDownloaded(let m):
            guard let digest = PhotoDigest(bytes: m.sha256) else {
                throw fail("its photo digest is \(m.sha256.count) bytes, not 32", nil)
            }
            return .photoDownloaded(DownloadedPhoto(
                pin: PinID(m.pin), collection: m.collection, slot: m.slot, digest: digest, byteCount: m.byteCount,
                mediaType: m.mediaType))
        case .photoDownloadFailed(let m):
            return .photoDownloadFailed(pin: PinID(m.pin), collection: m.collection, slot: m.slot, reason: m.reason)
        case .albumRequestFailed(let m):
            return .albumRequestFailed(pin: PinID(m.pin), collection: m.collection, reason: m.reason)
        case .photoRemoved(let m):
            return .photoRemoved(pin: PinID(m.pin), collection: m.collection, slot: m.slot, photo: PhotoIdentity(removed: m.remoteID, m.service))
        case .collectionReplaced(let m):
            return .collectionReplaced(pin: PinID(m.pin), oldCollection: m.oldCollection, newCollection: m.newCollection)
        case .placeForgotten(let m):
            return .placeForgotten(pin: PinID(m.pin), erasedEvents: m.erasedEvents)
        case .deviceSeen(let m):
            guard m.device.count == DeviceID.size, let device = try? DeviceID(logID: Array(m.device)) else {
                throw fail("its DeviceSeen names a device of \(m.device.count) bytes, not \(DeviceID.size)", nil)
            }
            guard m.head.count == 32 else { throw fail("its DeviceSeen names a head of \(m.head.count) bytes, not 32", nil) }
            guard m.through > 0 else { throw fail("its DeviceSeen names no event of device \(device.short)", nil) }
            return .deviceSeen(DeviceSeen(device: device, through: m.through, head: Array(m.head)))
        }
    }
}

/// A log payload handed to swift-protobuf without copying it out of its batch.
struct PayloadBytes: SwiftProtobufContiguousBytes {
    var slice: ArraySlice<UInt8>

    init(_ slice: ArraySlice<UInt8>) { self.slice = slice }
    init(repeating: UInt8, count: Int) { slice = ArraySlice(repeating: repeating, count: count) }
    init<S: Sequence>(_ sequence: S) where S.Element == UInt8 { slice = ArraySlice(sequence) }
    var count: Int { slice.count }
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try slice.withUnsafeBytes(body)
    }
    mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try slice.withUnsafeMutableBytes(body)
    }
}

import Foundation

extension PhotoIdentity {
    /// A removal's photo as its event stores it: none when both fields are empty (an event
    /// written before devices existed).
    init?(removed remoteID: String, _ service: String) {
        guard !remoteID.isEmpty || !service.isEmpty else { return nil }
        self.init(remoteID: remoteID, service: service)
    }
}
