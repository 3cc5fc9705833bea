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
    var events: [PageEventJSON]
    var last_seq: UInt64
    /// The sequence number to ask for next (`from`), when the page was cut at its limit.
    var next: UInt64?
    /// A store of several devices: each device (this one first), for the events' marks.
    var devices: [DeviceJSON]?
}

/// A device as the time-travel page marks its events.
struct DeviceJSON: Encodable {
    var device: String
    var name: String?
    /// What the page writes beside its events: the name, or the id's first digits.
    var label: String
    var this: Bool

    init(_ device: KnownDevice) {
        self.device = device.id.description
        name = device.name
        label = device.label
        this = device.isThis
    }
}

/// An event of a page: its JSON form (docs/EXPORT.md) and, in a store of several devices, the
/// other devices it was made at once with (an earlier event of theirs in the page that its
/// device had not seen: ``StoreReader/actedAtOnce(_:)``).
struct PageEventJSON: Encodable {
    var event: EventJSON
    var atOnceWith: [String]?

    private enum Keys: String, CodingKey { case at_once_with }

    func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(atOnceWith, forKey: .at_once_with)
    }
}

/// What a merge changed in a pin's album that this device had not seen (GET /api/pins/ID/news,
/// ``AlbumNews``): the album page says it once.
struct AlbumNewsJSON: Encodable {
    struct Change: Encodable {
        var seq: UInt64
        var type: String
        var device: String
        /// The device's name, or its id's first digits.
        var device_label: String
        var folded: Bool
    }

    var pin: String
    /// Other devices' events about the pin, in the merged order.
    var changes: [Change]
    /// This device's events about the pin that the fold passed over because of them.
    var passed_over: [Change]

    init(pin: PinID, news: AlbumNews, devices: [KnownDevice]) {
        let labels = Dictionary(uniqueKeysWithValues: devices.map { ($0.id, $0.label) })
        func change(_ recorded: RecordedEvent, folded: Bool) -> Change {
            let device = recorded.origin?.device
            return Change(
                seq: recorded.sequence, type: recorded.event.typeName, device: device?.description ?? "",
                device_label: device.flatMap { labels[$0] } ?? "", folded: folded)
        }
        self.pin = pin.description
        changes = news.theirs.map { change($0.event, folded: $0.folded) }
        passed_over = news.oursPassedOver.map { change($0, folded: false) }
    }
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
    /// This device's name, shown in every page's header (nil: a store of one unnamed device).
    var device_name: String?
}
