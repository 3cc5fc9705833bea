/// What a history says about one pin, read event by event for a forget (docs/EVENTS.md,
/// "Forgetting a place"): the events to erase, each by where it is (`Where`: a sequence number
/// in a store of one device, an event's device and number in a store of several), with the map
/// regions zoomed in on one of the pin's places; whether and where it was forgotten; and the
/// photos its albums and the others' downloaded.
struct PlaceScan<Where> {
    let pin: PinID
    /// Whether any event names the pin (a forget of a pin never seen is refused).
    private(set) var mentioned = false
    /// The first `PlaceForgotten` of the pin.
    private(set) var forgottenAt: UInt64?
    private(set) var photos: Set<PhotoDigest> = []
    private(set) var otherPhotos: Set<PhotoDigest> = []
    private var targets: [(Where, [UInt8])] = []
    private var places: [Coordinate] = []
    private var regions: [(Where, MapRegion)] = []

    init(pin: PinID) { self.pin = pin }

    /// Reads the next event of the history, found at `place`.
    mutating func read(_ recorded: RecordedEvent, at place: Where) {
        switch recorded.event {
        case .forgotten:
            return
        case .placeForgotten(let forgotten, _):
            if forgotten == pin {
                mentioned = true
                forgottenAt = forgottenAt ?? recorded.sequence
            }
            return
        case .regionChanged(let region) where region.latitudeSpan <= TouristStore.forgottenRegionSpan:
            regions.append((place, region))
        case .photoDownloaded(let photo):
            if photo.pin == pin { photos.insert(photo.digest) } else { otherPhotos.insert(photo.digest) }
        case .pinDropped(_, let coordinate), .pinDragged(_, let coordinate):
            if recorded.event.pin == pin { places.append(coordinate) }
        default:
            break
        }
        if recorded.event.pin == pin {
            mentioned = true
            targets.append((place, EventCodec.keptOnErase(recorded.event)))
        }
    }

    /// The events to erase, each with what it keeps (its type): the pin's, then the regions that
    /// show one of its places.
    var erasing: [(Where, [UInt8])] {
        targets + regions.filter { _, region in places.contains(where: region.shows) }.map { ($0, EventCodec.keptOnErase(.regionChanged($1))) }
    }
}
