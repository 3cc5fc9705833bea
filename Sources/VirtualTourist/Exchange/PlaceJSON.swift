import Places
import Synchronization

/// A pin's place in words, in `--json` and the web app's JSON: `{"text": "near Arrecife,
/// Spain", "kind": "near", "name": "Arrecife", "country": "Spain", "country_code": "ES",
/// "distance_km": 2.1}` (kind `in` for a country far from any town, `sea` for a sea or ocean;
/// docs/PLACES.md).
public struct PlaceJSON: Encodable, Sendable, Equatable {
    public var text: String
    public var kind: String
    public var name: String
    public var country: String?
    public var country_code: String?
    public var distance_km: Double?

    /// Nil only when the coordinate is not on the Earth (never for a pin the rules accepted)
    /// or the program was built without its place data.
    public init?(_ coordinate: Coordinate) {
        let key = Self.key(coordinate)
        if let known = Self.described.withLock({ $0[key] }) {
            guard let known else { return nil }
            self = known
            return
        }
        let place = Self(describing: coordinate)
        Self.described.withLock { known in
            // Full: one place makes room, the first in the table's order (as good as any other
            // and O(1)); the rest stay.
            if known.count >= Self.remembered { known.remove(at: known.startIndex) }
            known[key] = .some(place)
        }
        guard let place else { return nil }
        self = place
    }

    /// Places described so far, by their coordinate's bits. The map's every answer names every
    /// pin's place, and describing one is a search of towns and coastlines: a sixth of
    /// `GET /api/state` for 1,000 pins in a profile (docs/BENCHMARKS.md). A pin keeps its
    /// coordinate, so the same places are asked for again and again.
    private static let described = Mutex<[CoordinateKey: PlaceJSON?]>([:])
    /// Sixteen times the pins of the benchmark's store. Past it, each new place takes the room
    /// of one remembered, so the memory stays bounded and keeps serving what is asked again.
    static let remembered = 16_384
    static var rememberedCount: Int { described.withLock { $0.count } }

    struct CoordinateKey: Hashable {
        var latitude: UInt64
        var longitude: UInt64
    }

    static func key(_ coordinate: Coordinate) -> CoordinateKey {
        CoordinateKey(latitude: coordinate.latitude.bitPattern, longitude: coordinate.longitude.bitPattern)
    }

    private init?(describing coordinate: Coordinate) {
        guard let geocoder = try? ReverseGeocoder.bundled(),
            let place = try? geocoder.describe(latitude: coordinate.latitude, longitude: coordinate.longitude)
        else { return nil }
        text = place.text
        kind = place.kind.rawValue
        name = place.name
        country = place.country
        country_code = place.countryCode
        distance_km = place.distanceKilometres.map { ($0 * 10).rounded() / 10 }
    }
}
