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
