import DeviceLogs

/// The JSON forms of the state, for `--json` output and (later) the web app. Encode with
/// ``EventJSON/encodeLine(_:)``; keys are snake_case, pins in drop order, photos in album order.
public struct StateJSON: Encodable, Sendable {
    public var seq: UInt64
    public var region: RegionJSON?
    public var pins: [PinJSON]

    public init(_ state: TouristState) {
        self.init(state, albumPhotos: true)
    }

    /// Without `albumPhotos`, every album's photo list is left empty (``line(_:)`` writes them).
    init(_ state: TouristState, albumPhotos: Bool) {
        seq = state.sequence
        region = state.region.map(RegionJSON.init)
        pins = state.pinsInDropOrder.map { PinJSON($0, albumPhotos: albumPhotos) }
    }
}

public struct RegionJSON: Encodable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var latitude_span: Double
    public var longitude_span: Double

    public init(_ region: MapRegion) {
        latitude = region.center.latitude
        longitude = region.center.longitude
        latitude_span = region.latitudeSpan
        longitude_span = region.longitudeSpan
    }
}

public struct PinJSON: Encodable, Sendable {
    public var id: String
    public var latitude: Double
    public var longitude: Double
    public var dropped_at: UInt64
    /// The nearest named place, the country or the sea (``PlaceJSON``).
    public var place: PlaceJSON?
    public var album: AlbumJSON

    /// `localDevice`: the device it is shown on, in a store of several (``AlbumJSON/awaits_another_device``).
    public init(_ pin: Pin, localDevice: DeviceID? = nil) {
        self.init(pin, albumPhotos: true, localDevice: localDevice)
    }

    /// Without `albumPhotos`, the album's photo list is left empty (for a writer that writes
    /// it itself: `StateDiffJSON.line(_:)`).
    init(_ pin: Pin, albumPhotos: Bool, localDevice: DeviceID? = nil) {
        id = pin.id.description
        latitude = pin.coordinate.latitude
        longitude = pin.coordinate.longitude
        dropped_at = pin.droppedAt
        place = PlaceJSON(pin.coordinate)
        album = AlbumJSON(pin.album, photos: albumPhotos, localDevice: localDevice)
    }
}

public struct AlbumJSON: Encodable, Sendable {
    public var collection: UInt32
    /// `not-requested`, `listing`, `downloading`, `complete`, `no-images` or `failed`.
    public var status: String
    public var reason: String?
    public var page: UInt32?
    public var pages: UInt32
    public var total: UInt64
    public var downloaded: Int
    /// New Collection can be asked for: nothing is being listed or downloaded, or what is
    /// awaits another device.
    public var new_collection_enabled: Bool
    /// True while the album is being listed or downloaded for a request another device made
    /// (only that device answers it; its photos come with a sync); absent otherwise.
    public var awaits_another_device: Bool?
    /// False when the service has no photos beyond this listing: New Collection is refused
    /// (`no-other-photos`) rather than showing the same ones again.
    public var other_photos: Bool
    public var photos: [PhotoJSON]

    /// The status as ``status`` writes it.
    public static func name(of status: AlbumStatus) -> String {
        switch status {
        case .notRequested: "not-requested"
        case .listing: "listing"
        case .downloading: "downloading"
        case .complete: "complete"
        case .noImages: "no-images"
        case .failed: "failed"
        }
    }

    public init(_ album: Album, localDevice: DeviceID? = nil) {
        self.init(album, photos: true, localDevice: localDevice)
    }

    init(_ album: Album, photos withPhotos: Bool, localDevice: DeviceID? = nil) {
        collection = album.collection
        let counts = album.slotCounts
        let shown = album.status(counts)
        status = Self.name(of: shown)
        if case .failed(let why) = shown { reason = why }
        page = album.request?.page
        pages = album.pages
        total = album.total
        downloaded = counts.downloaded
        let elsewhere = album.awaitsAnotherDevice(than: localDevice)
        new_collection_enabled = shown.allowsNewCollection || elsewhere
        awaits_another_device = elsewhere ? true : nil
        other_photos = album.hasOtherPhotos
        photos = withPhotos ? album.slots.map(PhotoJSON.init) : []
    }
}

public struct PhotoJSON: Encodable, Sendable {
    public var slot: UInt32
    public var id: String
    public var title: String
    public var url: String
    /// `placeholder`, `downloaded` or `failed`.
    public var state: String
    public var digest: String?
    public var bytes: UInt64?
    public var media_type: String?
    public var reason: String?
    /// Who made it, its licence and its own page; absent when the listing recorded none.
    public var credit: CreditJSON?

    public init(_ slot: PhotoSlot) {
        self.slot = slot.number
        id = slot.photo.remoteID
        title = slot.photo.title
        url = slot.photo.url
        credit = slot.photo.hasCredit ? CreditJSON(slot.photo) : nil
        switch slot.state {
        case .placeholder: state = "placeholder"
        case .downloaded(let digest, let byteCount, let mediaType):
            state = "downloaded"
            self.digest = digest.description
            bytes = byteCount
            media_type = mediaType
        case .failed(let why):
            state = "failed"
            reason = why
        }
    }
}

/// A photo's credit as `--json` and the web page show it; empty fields are left out.
public struct CreditJSON: Encodable, Sendable {
    public var creator: String?
    public var licence: String?
    public var licence_url: String?
    public var page_url: String?
    public var date_taken: String?

    public init(_ photo: ListedPhoto) {
        func present(_ text: String) -> String? { text.isEmpty ? nil : text }
        creator = present(photo.creator)
        licence = present(photo.licenceName)
        licence_url = present(photo.licenceURL)
        page_url = present(photo.pageURL)
        date_taken = present(photo.dateTaken)
    }
}

public struct StateDiffJSON: Encodable, Sendable {
    public struct Move: Encodable, Sendable {
        public var pin: String
        public var from: [Double]
        public var to: [Double]
    }

    public struct Photo: Encodable, Sendable {
        public var pin: String
        public var collection: UInt32
        public var photo: PhotoJSON
    }

    public struct RegionChange: Encodable, Sendable {
        public var before: RegionJSON?
        public var after: RegionJSON?
    }

    public var from: UInt64
    public var to: UInt64
    public var region: RegionChange?
    public var pins_added: [PinJSON]
    public var pins_removed: [PinJSON]
    public var pins_moved: [Move]
    public var photos_added: [Photo]
    public var photos_removed: [Photo]

    public init(_ diff: StateDiff) {
        self.init(diff, albumPhotos: true)
    }

    init(_ diff: StateDiff, albumPhotos: Bool) {
        from = diff.from
        to = diff.to
        region = diff.region.map { RegionChange(before: $0.before.map(RegionJSON.init), after: $0.after.map(RegionJSON.init)) }
        pins_added = diff.pinsAdded.map { PinJSON($0, albumPhotos: albumPhotos) }
        pins_removed = diff.pinsRemoved.map { PinJSON($0, albumPhotos: albumPhotos) }
        pins_moved = diff.pinsMoved.map {
            Move(pin: $0.pin.description, from: [$0.from.latitude, $0.from.longitude], to: [$0.to.latitude, $0.to.longitude])
        }
        let photo = { (p: StateDiff.Photo) in Photo(pin: p.pin.description, collection: p.collection, photo: PhotoJSON(p.slot)) }
        photos_added = diff.photosAdded.map(photo)
        photos_removed = diff.photosRemoved.map(photo)
    }
}
