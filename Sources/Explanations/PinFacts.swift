import DeviceLogs
import VirtualTourist

/// What a person can see of one pin at one moment, fact by fact (docs/WHY.md): where it is, its
/// album's state, each photo slot, whether New Collection can be pressed and whether the
/// service has other photos. `vt why` names, for each fact, the events that set it.
public struct PinFacts: Hashable, Sendable {
    /// One fact, as ``changes(from:)`` names it.
    public enum Key: Hashable, Sendable {
        case place
        case album
        case slot(UInt32)
        case newCollection
        case otherPhotos
    }

    /// Where the pin is; nil when it is not on the map (never dropped, removed or forgotten).
    public var place: Coordinate?
    /// The album's collection and status (nil with the pin off the map).
    public var collection: UInt32?
    public var status: AlbumStatus?
    /// Each slot of the current collection, by number: what it shows.
    public var slots: [UInt32: PhotoSlot.State] = [:]
    /// Whether New Collection can be pressed on this device (as the web page decides it).
    public var newCollection = false
    /// Whether the photo service has photos beyond this listing.
    public var otherPhotos = true

    /// Which slots to note: a question about one photo needs one, a replay that checks every
    /// answer needs them all, the others none (noting every slot after every event of a pin with
    /// thousands of events was most of an answer's time).
    public enum Slots: Hashable, Sendable {
        case none
        case one(UInt32)
        case all
    }

    /// The facts of `pin` in `state`, as seen on `device` (nil in a store of one device).
    public init(_ pin: PinID, in state: TouristState, on device: DeviceID?, slots wanted: Slots = .all) {
        guard let shown = state.pins[pin] else { return }
        let album = shown.album
        place = shown.coordinate
        collection = album.collection
        status = album.status
        switch wanted {
        case .none: break
        case .one(let number): if let slot = album.slot(number) { slots[number] = slot.state }
        case .all: for slot in album.slots { slots[slot.number] = slot.state }
        }
        otherPhotos = album.hasOtherPhotos
        // The album page disables it while nothing can change, and when the service has no
        // other photos to show (WebApp's album.js).
        newCollection = album.allowsNewCollection(on: device) && !(status == .complete && !otherPhotos)
    }

    /// The facts whose value differs between `earlier` and these.
    public func changes(from earlier: PinFacts) -> Set<Key> {
        var changed: Set<Key> = []
        if place != earlier.place { changed.insert(.place) }
        if collection != earlier.collection || status != earlier.status { changed.insert(.album) }
        if newCollection != earlier.newCollection { changed.insert(.newCollection) }
        if otherPhotos != earlier.otherPhotos { changed.insert(.otherPhotos) }
        // A new collection changes every slot: the old ones left, new ones came.
        let sameCollection = collection == earlier.collection
        for (number, state) in slots where !sameCollection || earlier.slots[number] != state { changed.insert(.slot(number)) }
        for number in earlier.slots.keys where slots[number] == nil { changed.insert(.slot(number)) }
        return changed
    }
}
