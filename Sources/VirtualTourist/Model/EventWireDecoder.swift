import DeviceLogs

/// Decodes an `Envelope` payload (schemas/…/events.proto) straight into a ``DomainEvent``,
/// without building swift-protobuf's message values first: the replay's hot path (see
/// docs/BENCHMARKS.md for the profile that asked for it).
///
/// It returns nil for anything but a plain, current, well-formed envelope; ``EventCodec``
/// then decodes the payload the general way, which gives the same event or the error. Tests
/// hold the two paths to the same answers on every fixture, on the benchmark workload and on
/// mutated payloads.
enum EventWireDecoder {
    typealias Unusual = WireReader.Unusual

    static func decode(_ payload: ArraySlice<UInt8>) -> (cause: UInt64?, event: DomainEvent)? {
        payload.withUnsafeBytes { bytes in try? envelope(WireReader(bytes)) }
    }

    private static func envelope(_ reader: WireReader) throws(Unusual) -> (cause: UInt64?, event: DomainEvent) {
        var reader = reader
        var version: UInt32 = 0
        var cause: UInt64 = 0
        var event: DomainEvent?
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: version = try reader.uint32(type)
            case 2: cause = try reader.uint64(type)
            case 10...22:
                // A second event field would be merged or replace the first: the general path's call.
                guard event == nil else { throw Unusual() }
                event = try self.event(number, try reader.message(type))
            default: try reader.skip(type)
            }
        }
        guard version >= 1, version <= EventCodec.schemaVersion, let event else { throw Unusual() }
        return (cause == 0 ? nil : cause, event)
    }

    private static func event(_ number: UInt64, _ reader: WireReader) throws(Unusual) -> DomainEvent {
        switch number {
        case 10: return .regionChanged(try region(reader))
        case 11: let (pin, place) = try pinPlace(reader); return .pinDropped(pin, place)
        case 12: let (pin, place) = try pinPlace(reader); return .pinDragged(pin, place)
        case 13: return .pinRemoved(try pinSlot(reader).pin)
        case 14: return .albumRequested(try albumRequest(reader))
        case 15: return .photosListed(try listing(reader))
        case 16: return .photoDownloaded(try download(reader))
        case 17:
            let (pin, collection, slot, reason) = try pinSlot(reader, reasonField: 4)
            return .photoDownloadFailed(pin: pin, collection: collection, slot: slot, reason: reason)
        case 18:
            let (pin, collection, _, reason) = try pinSlot(reader, reasonField: 3)
            return .albumRequestFailed(pin: pin, collection: collection, reason: reason)
        case 19:
            return try photoRemoved(reader)
        case 20:
            let (pin, old, new, _) = try pinSlot(reader)
            return .collectionReplaced(pin: pin, oldCollection: old, newCollection: new)
        case 21:
            return try placeForgotten(reader)
        default:
            return try deviceSeen(reader)
        }
    }

    /// DeviceSeen: the device (1, 16 bytes), through (2, from 1), the head (3, 32 bytes); any
    /// other length is the general path's to name.
    private static func deviceSeen(_ reader: WireReader) throws(Unusual) -> DomainEvent {
        var reader = reader
        var device: DeviceID?
        var through: UInt64 = 0
        var head: [UInt8] = []
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: device = try reader.deviceID(type)
            case 2: through = try reader.uint64(type)
            case 3:
                guard type == .lengthDelimited else { throw Unusual() }
                head = Array(try reader.lengthDelimited())
            default: try reader.skip(type)
            }
        }
        guard let device, through > 0, head.count == 32 else { throw Unusual() }
        return .deviceSeen(DeviceSeen(device: device, through: through, head: head))
    }

    /// PhotoRemoved: pin (1), collection (2), slot (3), the photo's remote id (4) and service (5).
    private static func photoRemoved(_ reader: WireReader) throws(Unusual) -> DomainEvent {
        var reader = reader
        var pin: UInt64 = 0
        var collection: UInt32 = 0, slot: UInt32 = 0
        var remoteID = "", service = ""
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: pin = try reader.fixed64(type)
            case 2: collection = try reader.uint32(type)
            case 3: slot = try reader.uint32(type)
            case 4: remoteID = try reader.string(type)
            case 5: service = try reader.string(type)
            default: try reader.skip(type)
            }
        }
        return .photoRemoved(pin: PinID(pin), collection: collection, slot: slot, photo: PhotoIdentity(removed: remoteID, service))
    }

    private static func placeForgotten(_ reader: WireReader) throws(Unusual) -> DomainEvent {
        var reader = reader
        var pin: UInt64 = 0, erased: UInt64 = 0
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: pin = try reader.fixed64(type)
            case 2: erased = try reader.uint64(type)
            default: try reader.skip(type)
            }
        }
        return .placeForgotten(pin: PinID(pin), erasedEvents: erased)
    }

    static func region(_ reader: WireReader) throws(Unusual) -> MapRegion {
        var reader = reader
        var values = (0.0, 0.0, 0.0, 0.0)
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: values.0 = try reader.double(type)
            case 2: values.1 = try reader.double(type)
            case 3: values.2 = try reader.double(type)
            case 4: values.3 = try reader.double(type)
            default: try reader.skip(type)
            }
        }
        return MapRegion(center: Coordinate(latitude: values.0, longitude: values.1), latitudeSpan: values.2, longitudeSpan: values.3)
    }

    /// PinDropped and PinDragged: pin (1), latitude (2), longitude (3).
    private static func pinPlace(_ reader: WireReader) throws(Unusual) -> (PinID, Coordinate) {
        var reader = reader
        var pin: UInt64 = 0
        var latitude = 0.0, longitude = 0.0
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: pin = try reader.fixed64(type)
            case 2: latitude = try reader.double(type)
            case 3: longitude = try reader.double(type)
            default: try reader.skip(type)
            }
        }
        return (PinID(pin), Coordinate(latitude: latitude, longitude: longitude))
    }

    /// The messages shaped pin (1), then uint32 fields 2 and 3, and perhaps a string: PinRemoved,
    /// PhotoRemoved, CollectionReplaced, PhotoDownloadFailed (reason 4), AlbumRequestFailed
    /// (reason 3, so no field 3 number).
    private static func pinSlot(_ reader: WireReader, reasonField: UInt64 = 0)
        throws(Unusual) -> (pin: PinID, collection: UInt32, slot: UInt32, reason: String)
    {
        var reader = reader
        var pin: UInt64 = 0
        var second: UInt32 = 0, third: UInt32 = 0
        var reason = ""
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: pin = try reader.fixed64(type)
            case reasonField: reason = try reader.string(type)
            case 2: second = try reader.uint32(type)
            case 3: third = try reader.uint32(type)
            default: try reader.skip(type)
            }
        }
        return (PinID(pin), second, third, reason)
    }

    private static func albumRequest(_ reader: WireReader) throws(Unusual) -> AlbumRequest {
        var reader = reader
        var pin: UInt64 = 0
        var collection: UInt32 = 0, page: UInt32 = 0, perPage: UInt32 = 0
        var latitude = 0.0, longitude = 0.0
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: pin = try reader.fixed64(type)
            case 2: collection = try reader.uint32(type)
            case 3: page = try reader.uint32(type)
            case 4: perPage = try reader.uint32(type)
            case 5: latitude = try reader.double(type)
            case 6: longitude = try reader.double(type)
            default: try reader.skip(type)
            }
        }
        return AlbumRequest(
            pin: PinID(pin), collection: collection, page: page, perPage: perPage,
            place: Coordinate(latitude: latitude, longitude: longitude))
    }

    private static func listing(_ reader: WireReader) throws(Unusual) -> PhotoListing {
        var reader = reader
        var listing = PhotoListing(pin: PinID(0), collection: 0, page: 0, pages: 0, total: 0, photos: [])
        // The photos' texts stay views into the payload until the listing is read, then go into
        // one array the listing's photos share: one allocation a listing, not one a photo
        // (docs/BENCHMARKS-JOURNAL.md, "Cold replay at 2.5 M events/s").
        var photos: [ListedPhoto.WireParts] = []
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: listing.pin = PinID(try reader.fixed64(type))
            case 2: listing.collection = try reader.uint32(type)
            case 3: listing.page = try reader.uint32(type)
            case 4: listing.pages = try reader.uint32(type)
            case 5: listing.total = try reader.uint64(type)
            case 6:
                if photos.isEmpty { photos.reserveCapacity(reader.remaining / 64 + 1) }
                photos.append(try listedPhotoParts(try reader.message(type)))
            default: try reader.skip(type)
            }
        }
        listing.photos = ListedPhoto.sharingOneBuffer(photos)
        return listing
    }

    /// One photo on its own (a version-1 snapshot's slot): its texts in an array of its own.
    static func listedPhoto(_ reader: WireReader) throws(Unusual) -> ListedPhoto {
        ListedPhoto.sharingOneBuffer([try listedPhotoParts(reader)])[0]
    }

    /// A `ListedPhoto` message's fields, its texts checked to be UTF-8 but not yet copied.
    private static func listedPhotoParts(_ reader: WireReader) throws(Unusual) -> ListedPhoto.WireParts {
        var reader = reader
        var parts = ListedPhoto.WireParts()
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: parts.texts[ListedPhoto.Field.remoteID.rawValue] = try reader.utf8(type)
            case 2: parts.texts[ListedPhoto.Field.url.rawValue] = try reader.utf8(type)
            case 3: parts.texts[ListedPhoto.Field.title.rawValue] = try reader.utf8(type)
            case 4: parts.width = try reader.uint32(type)
            case 5: parts.height = try reader.uint32(type)
            case 6: parts.texts[ListedPhoto.Field.creator.rawValue] = try reader.utf8(type)
            case 7: parts.texts[ListedPhoto.Field.licenceName.rawValue] = try reader.utf8(type)
            case 8: parts.texts[ListedPhoto.Field.licenceURL.rawValue] = try reader.utf8(type)
            case 9: parts.texts[ListedPhoto.Field.pageURL.rawValue] = try reader.utf8(type)
            case 10: parts.texts[ListedPhoto.Field.dateTaken.rawValue] = try reader.utf8(type)
            default: try reader.skip(type)
            }
        }
        return parts
    }

    private static func download(_ reader: WireReader) throws(Unusual) -> DownloadedPhoto {
        var reader = reader
        var pin: UInt64 = 0
        var collection: UInt32 = 0, slot: UInt32 = 0
        var digest: PhotoDigest?
        var byteCount: UInt64 = 0
        var mediaType = ""
        while let (number, type) = try reader.nextField() {
            switch number {
            case 1: pin = try reader.fixed64(type)
            case 2: collection = try reader.uint32(type)
            case 3: slot = try reader.uint32(type)
            case 4: digest = try reader.digest(type)
            case 5: byteCount = try reader.uint64(type)
            case 6: mediaType = try reader.string(type)
            default: try reader.skip(type)
            }
        }
        guard let digest else { throw Unusual() }
        return DownloadedPhoto(pin: PinID(pin), collection: collection, slot: slot, digest: digest, byteCount: byteCount, mediaType: mediaType)
    }
}
