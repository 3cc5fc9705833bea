import Foundation
import Testing

@testable import Places

@Suite struct ReverseGeocoderTests {
    let geocoder = try! ReverseGeocoder.bundled()

    @Test(arguments: [
        (48.8584, 2.2945, "Paris", "France"),
        (28.9630, -13.5477, "Arrecife", "Spain"),
        (-33.8568, 151.2153, "Sydney", "Australia"),
        (35.6586, 139.7454, "Tokyo", "Japan"),
    ])
    func namesTheTownAPinIsIn(latitude: Double, longitude: Double, town: String, country: String) throws {
        let place = try geocoder.describe(latitude: latitude, longitude: longitude)
        #expect(place.kind == .near)
        #expect(place.name == town)
        #expect(place.country == country)
        #expect(place.text == "near \(town), \(country)")
        #expect((place.distanceKilometres ?? 99) < 10)
    }

    /// GeoNames lists a city's quarters as places of their own; the city is the name people
    /// know, so within 10 km the most populous place is named.
    @Test func aCitysQuarterGivesWayToTheCity() throws {
        let rocks = try geocoder.places.nearest(latitude: -33.8568, longitude: 151.2153, within: 100)
        #expect(rocks?.name != "Sydney", "the nearest place is a quarter, not the city")
        #expect(try geocoder.describe(latitude: -33.8568, longitude: 151.2153).name == "Sydney")
        // Farther than 10 km from anything bigger, the nearest place is named, however small.
        let village = try geocoder.describe(latitude: 64.0, longitude: -150.0)
        let nearest = geocoder.places.nearest(latitude: 64.0, longitude: -150.0, within: 100)
        #expect(village.name == nearest?.name && (nearest?.distanceKilometres ?? 0) > 10)
    }

    @Test func farFromAnyTownTheCountryIsNamed() throws {
        // The Libyan desert, the Empty Quarter, Greenland's ice: no place of 1,000 people within 100 km.
        let desert = try geocoder.describe(latitude: 22.5, longitude: 23.5)
        #expect(desert.kind == .country)
        #expect(desert.text == "in Libya")
        #expect(try geocoder.describe(latitude: 75, longitude: -40).text == "in Greenland")
        let quarter = try geocoder.describe(latitude: 20.0, longitude: 50.0)
        #expect(quarter.text == "in Saudi Arabia")
    }

    @Test(arguments: [
        (-30.0, -120.0, "in the South Pacific Ocean"),
        (30.0, -40.0, "in the North Atlantic Ocean"),
        (-25.0, 80.0, "in the Indian Ocean"),
        (-70.5, -100.0, "in the Southern Ocean"),
        (35.0, -150.0, "in the North Pacific Ocean"),
        (-20.0, -20.0, "in the South Atlantic Ocean"),
    ])
    func farFromLandTheSeaIsNamed(latitude: Double, longitude: Double, text: String) throws {
        let place = try geocoder.describe(latitude: latitude, longitude: longitude)
        #expect(place.kind == .sea)
        #expect(place.text == text)
    }

    @Test(arguments: [
        (Double.nan, 0.0), (0.0, Double.nan), (91.0, 0.0), (-90.5, 0.0), (0.0, 180.01), (0.0, -181.0),
        (Double.infinity, 0.0), (0.0, -Double.infinity),
    ])
    func aCoordinateOffTheEarthIsRefused(latitude: Double, longitude: Double) {
        #expect(throws: PlaceError.self) { try geocoder.describe(latitude: latitude, longitude: longitude) }
    }

    @Test func theEdgesOfTheMapAreAccepted() throws {
        for (latitude, longitude) in [(90.0, 0.0), (-90.0, 180.0), (0.0, -180.0), (89.99, 179.99)] {
            _ = try geocoder.describe(latitude: latitude, longitude: longitude)
        }
    }
}

@Suite struct PlaceIndexTests {
    let geocoder = try! ReverseGeocoder.bundled()

    /// The grid must give the answer a scan of every place gives, wherever the point is:
    /// random points, and the awkward ones (poles, the date line, cell corners).
    @Test func theGridFindsWhatAScanFinds() {
        var random = SeededRandom(seed: 0x5EED_2026)
        var points: [(Double, Double)] = [
            (89.9, 10), (-89.9, -170), (-17.8, 179.99), (-17.8, -179.99), (65.6, -168.5), (0, 0), (45, 45),
            (52.999, 13.999), (53.0, 14.0), (71.0, 179.5),
        ]
        for _ in 0..<20 {
            points.append((Double.random(in: -85...85, using: &random), Double.random(in: -180...180, using: &random)))
        }
        for (latitude, longitude) in points {
            for radius in [10.0, 100.0] {
                let grid = geocoder.places.nearest(latitude: latitude, longitude: longitude, within: radius)
                let scan = geocoder.places.nearestByScan(latitude: latitude, longitude: longitude, within: radius)
                #expect(grid?.distanceKilometres == scan?.distanceKilometres, "at \(latitude), \(longitude) within \(radius) km")
                let biggest = geocoder.places.mostPopulous(latitude: latitude, longitude: longitude, within: radius)
                let biggestByScan = geocoder.places.mostPopulousByScan(latitude: latitude, longitude: longitude, within: radius)
                #expect(biggest == biggestByScan, "at \(latitude), \(longitude) within \(radius) km")
            }
        }
    }

    @Test func theDataHoldsEveryPlaceOfTheSource() {
        // scripts/make-places-data keeps every GeoNames place of 1,000 people or more.
        #expect(geocoder.placeCount > 150_000)
        #expect(geocoder.land.countries.count > 170)
        #expect(geocoder.countryNames["ES"] == "Spain")
    }

    @Test func malformedDataIsRefusedWithItsLine() {
        // The places file: whole, it loads; cut short, with a wrong magic, or with a byte
        // past the end, it is refused.
        let whole = try! Gunzip.decompress(try! PlaceFiles.bytes("places.bin.gz"), name: "places")
        #expect((try? PlaceIndex(binary: whole))?.count == geocoder.placeCount)
        #expect(throws: PlaceDataError.self) { try PlaceIndex(binary: Array(whole.dropLast(1))) }
        #expect(throws: PlaceDataError.self) { try PlaceIndex(binary: whole + [0]) }
        #expect(throws: PlaceDataError.self) { try PlaceIndex(binary: Array("VTPX".utf8) + whole.dropFirst(4)) }
        #expect(throws: PlaceDataError.self) { try PlaceIndex(binary: Array(whole.prefix(20))) }
        #expect(throws: PlaceDataError.self) { try SeaRegions(tsv: "Sea\t10\t5\t0\t1\n") }
        #expect(throws: PlaceDataError.self) { try LandOutlines(json: Array("{\"countries\": 3}".utf8)) }
    }

    @Test func aDamagedGzipFileIsRefused() throws {
        let whole = try PlaceFiles.bytes("land.json.gz")
        #expect(throws: PlaceDataError.self) { try Gunzip.decompress(Array(whole.prefix(whole.count / 2)), name: "half") }
        #expect(throws: PlaceDataError.self) { try Gunzip.decompress(Array("not gzip".utf8), name: "text") }
        #expect(try Gunzip.decompress(whole, name: "land").first == UInt8(ascii: "{"))
    }
}

/// SplitMix64, so the random points are the same on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
