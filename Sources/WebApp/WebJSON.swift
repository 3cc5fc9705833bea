import VirtualTourist

/// What the map shows: the region and each pin with its album's state, without the photos
/// (GET /api/state). The album page asks for one pin's whole album (GET /api/pins/ID, a
/// ``PinJSON``).
struct MapJSON: Encodable {
    var seq: UInt64
    /// The log's last event (the time-travel slider's end).
    var last_seq: UInt64
    var region: RegionJSON?
    var pins: [PinSummaryJSON]

    init(_ state: TouristState, last: UInt64) {
        seq = state.sequence
        last_seq = last
        region = state.region.map(RegionJSON.init)
        pins = state.pinsInDropOrder.map(PinSummaryJSON.init)
    }
}

struct PinSummaryJSON: Encodable {
    var id: String
    var latitude: Double
    var longitude: Double
    /// As ``AlbumJSON/status``: `not-requested`, `listing`, `downloading`, `complete`,
    /// `no-images` or `failed`.
    var status: String
    var photos: Int
    var downloaded: Int
    /// The place in words ("near Arrecife, Spain"), the pin's tooltip.
    var place: String?

    /// Only counts: the map does not need the album's photo list built.
    init(_ pin: Pin) {
        id = pin.id.description
        latitude = pin.coordinate.latitude
        longitude = pin.coordinate.longitude
        place = PlaceJSON(pin.coordinate)?.text
        let counts = pin.album.slotCounts
        status = AlbumJSON.name(of: pin.album.status(counts))
        photos = pin.album.slots.count
        downloaded = counts.downloaded
    }
}

/// A place in a request body: `{"latitude": 48.85, "longitude": 2.29}`.
struct PlaceBody: Decodable {
    var latitude: Double
    var longitude: Double

    var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}

/// A region in a request body, as ``RegionJSON`` writes it.
struct RegionBody: Decodable {
    var latitude: Double
    var longitude: Double
    var latitude_span: Double
    var longitude_span: Double

    var region: MapRegion {
        MapRegion(center: Coordinate(latitude: latitude, longitude: longitude), latitudeSpan: latitude_span, longitudeSpan: longitude_span)
    }
}

/// A page of the log (GET /api/events).
struct EventPageJSON: Encodable {
    var events: [EventJSON]
    var last_seq: UInt64
    /// The sequence number to ask for next (`from`), when the page was cut at its limit.
    var next: UInt64?
}

/// What the pages need to know of the server (GET /api/config).
struct ConfigJSON: Encodable {
    var tiles: String?
    var event_types: [String]
    var max_photos: Int
    /// A read-only replica: the pages offer no changes.
    var read_only: Bool
    /// GET /api/replication answers.
    var replication: Bool
}
