/// A place on the map, in degrees (WGS 84).
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Why this coordinate cannot be a place, or nil: latitude in -90...90, longitude in
    /// -180...180, both finite.
    public var problem: String? {
        if !latitude.isFinite { return "latitude \(latitude) is not a number" }
        if !longitude.isFinite { return "longitude \(longitude) is not a number" }
        if !(-90...90).contains(latitude) { return "latitude \(latitude) is outside -90…90" }
        if !(-180...180).contains(longitude) { return "longitude \(longitude) is outside -180…180" }
        return nil
    }

    public var description: String { "\(latitude), \(longitude)" }
}

/// The part of the map in view: a centre and the span of latitude and longitude shown.
public struct MapRegion: Hashable, Sendable, CustomStringConvertible {
    public var center: Coordinate
    public var latitudeSpan: Double
    public var longitudeSpan: Double

    public init(center: Coordinate, latitudeSpan: Double, longitudeSpan: Double) {
        self.center = center
        self.latitudeSpan = latitudeSpan
        self.longitudeSpan = longitudeSpan
    }

    /// Why this region cannot be shown, or nil: a valid centre, spans in (0, 180] and (0, 360].
    public var problem: String? {
        if let problem = center.problem { return "the centre's \(problem)" }
        if !latitudeSpan.isFinite || !(latitudeSpan > 0 && latitudeSpan <= 180) {
            return "the latitude span \(latitudeSpan) is outside (0, 180]"
        }
        if !longitudeSpan.isFinite || !(longitudeSpan > 0 && longitudeSpan <= 360) {
            return "the longitude span \(longitudeSpan) is outside (0, 360]"
        }
        return nil
    }

    public var description: String { "centre \(center), span \(latitudeSpan) × \(longitudeSpan)" }
}
