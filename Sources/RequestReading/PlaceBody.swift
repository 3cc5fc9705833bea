import VirtualTourist

/// A place in a request body: `{"latitude": 48.85, "longitude": 2.29}`.
public struct PlaceBody: Decodable, Sendable {
    public var latitude: Double
    public var longitude: Double

    public var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}
