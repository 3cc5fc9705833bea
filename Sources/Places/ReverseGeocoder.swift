import Foundation

/// A pin's place in words, offline: "near Arrecife, Spain" when a named place (GeoNames,
/// population ≥ 1,000) is within ``ReverseGeocoder/nearRadius`` km (the most populous within
/// ``ReverseGeocoder/townRadius`` km, else the nearest); else "in Libya" inside a
/// country's outline (Natural Earth 1:110m); else "in the South Pacific Ocean" (oceans.tsv).
///
/// ```swift
/// let geocoder = try ReverseGeocoder.bundled()           // loads the data once, on first use
/// try geocoder.describe(latitude: 28.96, longitude: -13.55).text   // "near Arrecife, Spain"
/// try geocoder.describe(latitude: -30, longitude: -120).text       // "in the South Pacific Ocean"
/// ```
///
/// A lookup reads a few grid cells (``PlaceIndex``) and a band of a few outlines: about 2.4 µs
/// in a release build (docs/PLACES.md, `scripts/measure-places`). Loading takes under 0.1 s
/// (0.15 s in a debug build), once per process, the first time a name is asked for.
public struct ReverseGeocoder: Sendable {
    /// How far a named place may be for "near X": farther than this, the country or the sea.
    public static let nearRadius = 100.0
    /// Within this many km the place with the most people is named rather than the nearest:
    /// GeoNames lists a city's quarters too, and a pin at the Opera House is "near Sydney".
    public static let townRadius = 10.0

    let places: PlaceIndex
    let countryNames: [String: String]
    let land: LandOutlines
    let seas: SeaRegions

    init(places: PlaceIndex, countryNames: [String: String], land: LandOutlines, seas: SeaRegions) {
        self.places = places
        self.countryNames = countryNames
        self.land = land
        self.seas = seas
    }

    /// The geocoder over the data that ships in this module, loaded on the first call.
    public static func bundled() throws(PlaceDataError) -> ReverseGeocoder { try loaded.get() }

    private static let loaded: Result<ReverseGeocoder, PlaceDataError> = Result { () throws(PlaceDataError) in
        let places = try PlaceIndex(binary: try Gunzip.decompress(try PlaceFiles.bytes("places.bin.gz"), name: "places.bin.gz"))
        var names: [String: String] = [:]
        for line in try PlaceFiles.text("countries.tsv").split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count == 2 { names[String(fields[0])] = String(fields[1]) }
        }
        let land = try LandOutlines(json: try Gunzip.decompress(try PlaceFiles.bytes("land.json.gz"), name: "land.json.gz"))
        let seas = try SeaRegions(tsv: try PlaceFiles.text("oceans.tsv"))
        return ReverseGeocoder(places: places, countryNames: names, land: land, seas: seas)
    }

    /// The place in words.
    ///
    /// - Throws: ``PlaceError`` for a latitude outside −90…90, a longitude outside −180…180,
    ///   or a value that is not a number.
    public func describe(latitude: Double, longitude: Double) throws(PlaceError) -> PlaceName {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw PlaceError("there is no place at latitude \(latitude), longitude \(longitude): latitude is −90…90 and longitude −180…180")
        }
        // The best-known place close by (Sydney, not its quarter The Rocks), else the nearest.
        let known = places.mostPopulous(latitude: latitude, longitude: longitude, within: Self.townRadius)
        if let found = known ?? places.nearest(latitude: latitude, longitude: longitude, within: Self.nearRadius) {
            let country = countryNames[found.countryCode] ?? found.countryCode
            return PlaceName(
                kind: .near, name: found.name, country: country, countryCode: found.countryCode,
                distanceKilometres: found.distanceKilometres)
        }
        if let country = land.country(latitude: latitude, longitude: longitude) {
            return PlaceName(kind: .country, name: country, country: country)
        }
        return PlaceName(kind: .sea, name: seas.name(latitude: latitude, longitude: longitude) ?? "open sea")
    }

    /// How many named places the index holds.
    public var placeCount: Int { places.count }
}

/// What ``ReverseGeocoder/describe(latitude:longitude:)`` found.
public struct PlaceName: Hashable, Sendable {
    public enum Kind: String, Sendable {
        /// A named place within ``ReverseGeocoder/nearRadius`` km.
        case near
        /// Inside a country's outline, with no named place near.
        case country = "in"
        /// Outside every country: a sea or ocean.
        case sea
    }

    public internal(set) var kind: Kind
    /// The town, the country, or the sea ("Arrecife", "Libya", "South Pacific Ocean").
    public internal(set) var name: String
    /// The country's name, when on land.
    public internal(set) var country: String?
    /// ISO 3166 alpha-2 for a named place ("ES").
    public internal(set) var countryCode: String?
    /// How far the named place is, in kilometres.
    public internal(set) var distanceKilometres: Double?

    /// "near Arrecife, Spain", "in Libya", "in the South Pacific Ocean".
    public var text: String {
        switch kind {
        case .near: "near \(name)\(country.map { ", \($0)" } ?? "")"
        case .country: "in \(name)"
        case .sea: name == "open sea" ? "in the open sea" : "in the \(name)"
        }
    }
}

/// A coordinate that is not on the Earth.
public struct PlaceError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The data files, from this module's resources.
enum PlaceFiles {
    static func bytes(_ name: String) throws(PlaceDataError) -> [UInt8] {
        guard let folder = Bundle.module.url(forResource: "Resources", withExtension: nil),
            let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
        else { throw PlaceDataError("the place data file \(name) is missing from the program's resources (rebuild it)") }
        return Array(data)
    }

    static func text(_ name: String) throws(PlaceDataError) -> String {
        let raw = try bytes(name)
        let plain = name.hasSuffix(".gz") ? try Gunzip.decompress(raw, name: name) : raw
        return String(decoding: plain, as: UTF8.self)
    }

    /// The land outlines as stored: gzip-compressed JSON, which the web app sends as it is.
    static let landGzip: Result<[UInt8], PlaceDataError> = Result { () throws(PlaceDataError) in try bytes("land.json.gz") }
}

/// The land the offline map draws: Natural Earth's countries as gzip-compressed JSON
/// (`{"source": …, "countries": [{"name": …, "rings": [[lon, lat, lon, lat, …], …]}]}`).
public enum LandMap {
    /// The file's bytes, read once.
    public static func gzipJSON() throws(PlaceDataError) -> [UInt8] { try PlaceFiles.landGzip.get() }

    /// The same JSON uncompressed, for a client that does not take gzip.
    public static func json() throws(PlaceDataError) -> [UInt8] { try Gunzip.decompress(try gzipJSON(), name: "land.json.gz") }
}
