import VirtualTourist

/// A fact `vt why` explains (docs/WHY.md).
public enum WhyQuestion: Hashable, Sendable, CustomStringConvertible {
    /// Where a pin is, or why it is not on the map.
    case pin(PinID)
    /// The state of a pin's album: its collection and status.
    case album(PinID)
    /// Whether New Collection can be pressed for a pin's album, and why.
    case newCollection(PinID)
    /// What one slot of a pin's album shows (by its number in the collection's listing).
    case photo(PinID, slot: UInt32)
    /// Where the map opens.
    case region

    public var pin: PinID? {
        switch self {
        case .pin(let pin), .album(let pin), .newCollection(let pin), .photo(let pin, _): pin
        case .region: nil
        }
    }

    /// The questions' names, as `vt why` and `GET /api/why` take them.
    public static let kinds = ["pin", "album", "new-collection", "photo", "region"]

    /// The question named `kind` (one of ``kinds``) about `pin` and, for a photo, `slot`; nil
    /// for another name or a part missing (the caller says which).
    public init?(kind: String, pin: PinID?, slot: UInt32?) {
        switch (kind, pin, slot) {
        case ("region", _, _): self = .region
        case ("pin", let pin?, _): self = .pin(pin)
        case ("album", let pin?, _): self = .album(pin)
        case ("new-collection", let pin?, _): self = .newCollection(pin)
        case ("photo", let pin?, let slot?): self = .photo(pin, slot: slot)
        default: return nil
        }
    }

    /// The question's name in the JSON answer (`"pin"`, `"album"`, `"new-collection"`, `"photo"`, `"region"`).
    public var kind: String {
        switch self {
        case .pin: "pin"
        case .album: "album"
        case .newCollection: "new-collection"
        case .photo: "photo"
        case .region: "region"
        }
    }

    public var description: String {
        switch self {
        case .pin(let pin): "where pin \(pin) is"
        case .album(let pin): "the album of pin \(pin)"
        case .newCollection(let pin): "New Collection for pin \(pin)"
        case .photo(let pin, let slot): "photo \(slot) of pin \(pin)'s album"
        case .region: "where the map opens"
        }
    }
}
