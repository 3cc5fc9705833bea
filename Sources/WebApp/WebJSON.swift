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

    init(_ state: TouristState, last: UInt64, pins withPins: Bool = true) {
        seq = state.sequence
        last_seq = last
        region = state.region.map(RegionJSON.init)
        pins = withPins ? state.pinsInDropOrder.map(PinSummaryJSON.init) : []
    }

    /// The bytes `EventJSON.encodeLine(MapJSON(state, last: last))` writes, each pin written
    /// straight from the state: `JSONEncoder` made a value of every pin summary and was 42 % of
    /// the map's answer for 1,000 pins (docs/BENCHMARKS-JOURNAL.md, "The map's answer"). The rest goes
    /// through the encoder, with the pins left out; they are filled in here.
    static func line(_ state: TouristState, last: UInt64) throws -> [UInt8] {
        let pins = state.pinsInDropOrder
        // The encoder refuses a number that is not finite; the rules never let one in, but the
        // encoder says so if one did.
        guard pins.allSatisfy({ $0.coordinate.latitude.isFinite && $0.coordinate.longitude.isFinite }) else {
            return Array(try EventJSON.encodeLine(MapJSON(state, last: last)).utf8)
        }
        // Keys are sorted: last_seq, then the pins.
        var line = JSONLineFiller(try EventJSON.encodeLine(MapJSON(state, last: last, pins: false)), extra: pins.count * 200)
        line.fill(after: "\"pins\":[]") { json in
            for (index, pin) in pins.enumerated() {
                if index > 0 { json.raw(",") }
                PinSummaryJSON.write(pin, into: &json)
            }
        }
        return line.finished()
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

    /// As the encoder writes a summary: keys sorted, no place key when there is none.
    static func write(_ pin: Pin, into json: inout JSONLineBytes) {
        let counts = pin.album.slotCounts
        json.raw("{\"downloaded\":")
        json.number(counts.downloaded)
        json.raw(",\"id\":")
        json.string(pin.id.description)
        json.raw(",\"latitude\":")
        json.number(pin.coordinate.latitude)
        json.raw(",\"longitude\":")
        json.number(pin.coordinate.longitude)
        json.raw(",\"photos\":")
        json.number(pin.album.slots.count)
        if let place = PlaceJSON(pin.coordinate)?.text {
            json.raw(",\"place\":")
            json.string(place)
        }
        json.raw(",\"status\":")
        json.string(AlbumJSON.name(of: pin.album.status(counts)))
        json.raw("}")
    }

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
