import Places

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
