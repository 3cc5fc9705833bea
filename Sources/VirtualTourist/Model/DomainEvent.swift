import BlobStore

/// One fact of the app's history, as the domain sees it (the schema is
/// `schemas/virtual_tourist/v1/events.proto`; ``EventCodec`` maps between the two).
public enum DomainEvent: Hashable, Sendable {
    case regionChanged(MapRegion)
    case pinDropped(PinID, Coordinate)
    case pinDragged(PinID, Coordinate)
    case pinRemoved(PinID)
    case albumRequested(AlbumRequest)
    case photosListed(PhotoListing)
    case photoDownloaded(DownloadedPhoto)
    case photoDownloadFailed(pin: PinID, collection: UInt32, slot: UInt32, reason: String)
    case albumRequestFailed(pin: PinID, collection: UInt32, reason: String)
    /// `photo`: which photo it was (events written before devices existed have none; the fold
    /// takes it from the slot). A removal keeps the photo out of every later collection of the
    /// pin, from every device (docs/DEVICES.md, "Rules by intent").
    case photoRemoved(pin: PinID, collection: UInt32, slot: UInt32, photo: PhotoIdentity? = nil)
    case collectionReplaced(pin: PinID, oldCollection: UInt32, newCollection: UInt32)
    /// The person forgot a place: the pin left the map and its earlier events were erased.
    case placeForgotten(pin: PinID, erasedEvents: UInt64)
    /// In a store of several devices: how far this device's copy of another device's log went
    /// when the record it begins was written (docs/DEVICES.md). Changes nothing on the map.
    case deviceSeen(DeviceSeen)
    /// An event whose payload was erased by a forget: what kind it was, and its payload's digest.
    /// Read from the log, never appended (docs/EVENTS.md, "Forgetting a place").
    case forgotten(ForgottenEvent)

    /// The pin the event is about, if any.
    public var pin: PinID? {
        switch self {
        case .regionChanged: nil
        case .pinDropped(let pin, _), .pinDragged(let pin, _), .pinRemoved(let pin): pin
        case .albumRequested(let request): request.pin
        case .photosListed(let listing): listing.pin
        case .photoDownloaded(let photo): photo.pin
        case .photoDownloadFailed(let pin, _, _, _), .albumRequestFailed(let pin, _, _),
            .photoRemoved(let pin, _, _, _), .collectionReplaced(let pin, _, _), .placeForgotten(let pin, _):
            pin
        case .forgotten, .deviceSeen: nil
        }
    }

    /// The event type's name, as in the schema (`PinDropped`).
    public var typeName: String {
        switch self {
        case .regionChanged: "RegionChanged"
        case .pinDropped: "PinDropped"
        case .pinDragged: "PinDragged"
        case .pinRemoved: "PinRemoved"
        case .albumRequested: "AlbumRequested"
        case .photosListed: "PhotosListed"
        case .photoDownloaded: "PhotoDownloaded"
        case .photoDownloadFailed: "PhotoDownloadFailed"
        case .albumRequestFailed: "AlbumRequestFailed"
        case .photoRemoved: "PhotoRemoved"
        case .collectionReplaced: "CollectionReplaced"
        case .placeForgotten: "PlaceForgotten"
        case .deviceSeen: "DeviceSeen"
        case .forgotten: "Forgotten"
        }
    }

    /// Every type name, in schema order.
    public static let typeNames = [
        "RegionChanged", "PinDropped", "PinDragged", "PinRemoved", "AlbumRequested", "PhotosListed",
        "PhotoDownloaded", "PhotoDownloadFailed", "AlbumRequestFailed", "PhotoRemoved", "CollectionReplaced",
        "PlaceForgotten", "DeviceSeen", "Forgotten",
    ]

    /// The type names of events that can be appended, in schema order: their schema field
    /// numbers are 10, 11, … (`Forgotten` is what erasure leaves, not a schema type).
    public static let schemaTypeNames = Array(typeNames.dropLast())
}

/// What a forget leaves of an event: its kind and its payload's SHA-256 (docs/EVENTS.md).
public struct ForgottenEvent: Hashable, Sendable {
    /// The erased event's type name (`PinDropped`), nil when the kept type is not one this
    /// program knows.
    public var typeName: String?
    /// The SHA-256 of the payload it had: the chain still covers it. (A ``BlobDigest`` for its
    /// 32 bytes and hex form, though it names an event's payload, not a blob.)
    public var digest: BlobDigest

    public init(typeName: String?, digest: BlobDigest) {
        self.typeName = typeName
        self.digest = digest
    }
}

/// What a device had seen of another: its copy of that device's log held events 1 through
/// `through`, whose chain head is `head` (docs/DEVICES.md, "What an event carries for the merge").
public struct DeviceSeen: Hashable, Sendable {
    public var device: DeviceID
    public var through: UInt64
    /// 32 bytes.
    public var head: [UInt8]

    public init(device: DeviceID, through: UInt64, head: [UInt8]) {
        self.device = device
        self.through = through
        self.head = head
    }

    /// The head in lowercase hexadecimal, as `vt log` and the JSON form show it.
    public var headHex: String { head.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
}

/// A request for a collection of photos near a pin.
public struct AlbumRequest: Hashable, Sendable {
    public var pin: PinID
    public var collection: UInt32
    public var page: UInt32
    public var perPage: UInt32
    /// Where the photos are searched for.
    public var place: Coordinate

    public init(pin: PinID, collection: UInt32, page: UInt32, perPage: UInt32, place: Coordinate) {
        self.pin = pin
        self.collection = collection
        self.page = page
        self.perPage = perPage
        self.place = place
    }
}

/// The photo service's answer to an ``AlbumRequest``.
public struct PhotoListing: Hashable, Sendable {
    public var pin: PinID
    public var collection: UInt32
    public var page: UInt32
    public var pages: UInt32
    public var total: UInt64
    public var photos: [ListedPhoto]

    public init(pin: PinID, collection: UInt32, page: UInt32, pages: UInt32, total: UInt64, photos: [ListedPhoto]) {
        self.pin = pin
        self.collection = collection
        self.page = page
        self.pages = pages
        self.total = total
        self.photos = photos
    }
}

/// A listed photo whose image was downloaded and stored.
public struct DownloadedPhoto: Hashable, Sendable {
    public var pin: PinID
    public var collection: UInt32
    public var slot: UInt32
    public var digest: PhotoDigest
    public var byteCount: UInt64
    public var mediaType: String

    public init(pin: PinID, collection: UInt32, slot: UInt32, digest: PhotoDigest, byteCount: UInt64, mediaType: String) {
        self.pin = pin
        self.collection = collection
        self.slot = slot
        self.digest = digest
        self.byteCount = byteCount
        self.mediaType = mediaType
    }
}

/// An event as the log holds it: where it is, when, and why.
public struct RecordedEvent: Hashable, Sendable {
    /// Its position: in a store of one device, its sequence number in the log; in a store of
    /// several, its position in the merged order (``origin`` says where it is in its own log).
    public var sequence: UInt64
    public var timestamp: LogTimestamp
    /// The sequence number of the event that caused this one, if any, in the same log.
    public var cause: UInt64?
    public var event: DomainEvent
    /// The device whose log holds it and its sequence number there: set in a store of several
    /// devices, nil in a store of one (where ``sequence`` is that number).
    public var origin: EventOrigin?

    public init(sequence: UInt64, timestamp: LogTimestamp, cause: UInt64?, event: DomainEvent, origin: EventOrigin? = nil) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.cause = cause
        self.event = event
        self.origin = origin
    }
}

/// Where an event of a store of several devices was written: the device, and the event's
/// sequence number in that device's log.
public struct EventOrigin: Hashable, Sendable {
    public var device: DeviceID
    public var sequence: UInt64

    public init(device: DeviceID, sequence: UInt64) {
        self.device = device
        self.sequence = sequence
    }
}

import DeviceLogs
import EventLog
