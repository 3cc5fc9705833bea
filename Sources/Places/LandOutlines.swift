import Foundation

/// The countries' outlines (Natural Earth 1:110m): the land the offline map draws, and the
/// answer to "which country is this point in" when no named place is near.
///
/// ```swift
/// let land = try LandOutlines(json: bytes)
/// land.country(latitude: 27.0, longitude: 17.0)   // "Libya"
/// land.country(latitude: -30.0, longitude: -120)  // nil: the sea
/// ```
///
/// At 1:110m a coast is right to within about 10 km, so a point that close to a coast may be
/// answered either way; the geocoder asks only for points with no named place within 100 km.
struct LandOutlines: Sendable {
    struct Ring: Sendable {
        /// Longitude, latitude, longitude, latitude, …
        var points: [Double]
        var west: Double, east: Double, south: Double, north: Double
        /// The edges (edge k joins point k to the next) that span each 1° band of latitude
        /// from `firstBand`: a ray at latitude y can only cross the edges of y's band, so a
        /// test reads a few dozen edges, not Russia's thousand.
        var firstBand: Int
        var bandStart: [Int32]
        var bandEdges: [Int32]

        init(points: [Double]) {
            self.points = points
            let longitudes = stride(from: 0, to: points.count, by: 2).map { points[$0] }
            let latitudes = stride(from: 1, to: points.count, by: 2).map { points[$0] }
            west = longitudes.min()!
            east = longitudes.max()!
            south = latitudes.min()!
            north = latitudes.max()!
            firstBand = Self.band(south)
            let bands = Self.band(north) - firstBand + 1
            var members = [[Int32]](repeating: [], count: bands)
            let count = latitudes.count
            for edge in 0..<count {
                let a = latitudes[edge], b = latitudes[(edge + 1) % count]
                for band in Self.band(min(a, b))...Self.band(max(a, b)) { members[band - firstBand].append(Int32(edge)) }
            }
            var starts: [Int32] = [0]
            for band in members { starts.append(starts.last! + Int32(band.count)) }
            bandStart = starts
            bandEdges = members.flatMap { $0 }
        }

        static func band(_ latitude: Double) -> Int { Int((latitude + 90).rounded(.down)) }

        /// Ray casting towards the east over the edges of the point's band: inside when the
        /// ray crosses an odd number of them.
        func contains(latitude y: Double, longitude x: Double) -> Bool {
            let band = Self.band(y) - firstBand
            guard band >= 0, band + 1 < bandStart.count else { return false }
            let count = points.count / 2
            var inside = false
            for position in Int(bandStart[band])..<Int(bandStart[band + 1]) {
                let i = Int(bandEdges[position]), j = (i + 1) % count
                let xi = points[2 * i], yi = points[2 * i + 1]
                let xj = points[2 * j], yj = points[2 * j + 1]
                if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi { inside.toggle() }
            }
            return inside
        }
    }

    struct Country: Sendable {
        var name: String
        var rings: [Ring]
    }

    let countries: [Country]
    let source: String

    private struct Document: Decodable {
        struct Shape: Decodable {
            var name: String
            var rings: [[Double]]
        }
        var source: String
        var countries: [Shape]
    }

    init(json: [UInt8]) throws(PlaceDataError) {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(json))
        } catch {
            throw PlaceDataError("the land outlines are not the expected JSON: \(error)")
        }
        countries = try document.countries.map { shape throws(PlaceDataError) in
            Country(name: shape.name, rings: try shape.rings.map { points throws(PlaceDataError) in
                guard points.count >= 6, points.count % 2 == 0 else {
                    throw PlaceDataError("the outline of \(shape.name) has a ring of \(points.count) numbers")
                }
                return Ring(points: points)
            })
        }
        source = document.source
    }

    /// The country whose outline holds the point, or nil at sea. Even-odd over all of a
    /// country's rings, so a hole (an enclave) is not part of it.
    func country(latitude: Double, longitude: Double) -> String? {
        for country in countries {
            var inside = false
            for ring in country.rings
            where latitude >= ring.south && latitude <= ring.north && longitude >= ring.west && longitude <= ring.east {
                if ring.contains(latitude: latitude, longitude: longitude) { inside.toggle() }
            }
            if inside { return country.name }
        }
        return nil
    }
}

/// Named rectangles of sea (oceans.tsv): the first that holds a point names it. Rough on
/// purpose: they are asked only about points outside every country's outline.
struct SeaRegions: Sendable {
    struct Region: Sendable {
        var name: String
        var south: Double, north: Double, west: Double, east: Double
    }

    let regions: [Region]

    /// Lines of `name TAB south TAB north TAB west TAB east`; `#` starts a comment line.
    init(tsv text: String) throws(PlaceDataError) {
        var regions: [Region] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
            let fields = line.split(separator: "\t")
            let numbers = fields.dropFirst().compactMap { Double($0) }
            guard fields.count == 5, numbers.count == 4, numbers[0] < numbers[1], numbers[2] < numbers[3] else {
                throw PlaceDataError("the sea region line \"\(line)\" is not name, south, north, west, east")
            }
            regions.append(Region(name: String(fields[0]), south: numbers[0], north: numbers[1], west: numbers[2], east: numbers[3]))
        }
        self.regions = regions
    }

    func name(latitude: Double, longitude: Double) -> String? {
        regions.first { region in
            (region.south...region.north).contains(latitude) && (region.west...region.east).contains(longitude)
        }?.name
    }
}
