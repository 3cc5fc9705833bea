/// A yes-or-no question about a state, for `vt bisect`: when did this become true?
///
/// ```swift
/// let condition = StateCondition.photosBelow(pin, 5)
/// condition.holds(in: store.state)
/// ```
public enum StateCondition: Hashable, Sendable, CustomStringConvertible {
    /// The pin is not on the map (never dropped yet, or removed).
    case pinGone(PinID)
    /// The pin is on the map.
    case pinPresent(PinID)
    /// The pin's album shows fewer than this many photos (a missing pin shows none).
    case photosBelow(PinID, Int)
    /// The pin's album shows at least this many photos.
    case photosAtLeast(PinID, Int)
    /// Fewer than this many pins are on the map.
    case pinsBelow(Int)
    /// At least this many pins are on the map.
    case pinsAtLeast(Int)

    public func holds(in state: TouristState) -> Bool {
        switch self {
        case .pinGone(let pin): state.pins[pin] == nil
        case .pinPresent(let pin): state.pins[pin] != nil
        case .photosBelow(let pin, let count): (state.pins[pin]?.album.slots.count ?? 0) < count
        case .photosAtLeast(let pin, let count): (state.pins[pin]?.album.slots.count ?? 0) >= count
        case .pinsBelow(let count): state.pins.count < count
        case .pinsAtLeast(let count): state.pins.count >= count
        }
    }

    public var description: String {
        switch self {
        case .pinGone(let pin): "pin \(pin) is gone"
        case .pinPresent(let pin): "pin \(pin) is on the map"
        case .photosBelow(let pin, let count): "pin \(pin)'s album shows fewer than \(count) photos"
        case .photosAtLeast(let pin, let count): "pin \(pin)'s album shows at least \(count) photos"
        case .pinsBelow(let count): "fewer than \(count) pins are on the map"
        case .pinsAtLeast(let count): "at least \(count) pins are on the map"
        }
    }
}
