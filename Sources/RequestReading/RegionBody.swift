import VirtualTourist

/// A region in a request body, as the web app's `RegionJSON` writes it.
public struct RegionBody: Decodable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var latitude_span: Double
    public var longitude_span: Double

    public var region: MapRegion {
        MapRegion(center: Coordinate(latitude: latitude, longitude: longitude), latitudeSpan: latitude_span, longitudeSpan: longitude_span)
    }
}
