import Foundation

/// Named places (GeoNames, population ≥ 1,000) in a grid of 1° cells, for "the nearest place
/// within R km" without scanning all 170,000.
///
/// ```swift
/// let index = try PlaceIndex(tsv: bytes)
/// index.nearest(latitude: 29.0, longitude: -13.6, within: 100)            // the nearest village
/// index.mostPopulous(latitude: -33.857, longitude: 151.215, within: 10)   // Sydney, not The Rocks
/// ```
///
/// A query reads the cells that a circle of R km can touch: about (2R/111)² cells at the
/// equator (9 for 100 km), more towards the poles where a degree of longitude shrinks, all of a
/// band within R of a pole. Cells are one flat array (counting sort), so a lookup allocates
/// nothing.
struct PlaceIndex: Sendable {
    struct Found: Sendable, Equatable {
        var name: String
        var countryCode: String
        var population: Int
        var distanceKilometres: Double
    }

    private let names: [String]
    private let countryCodes: [String]
    private let latitudes: [Double]
    private let longitudes: [Double]
    private let populations: [Int32]
    /// `cellStart[c]..<cellStart[c + 1]` are the positions in `order` of the places in cell c.
    private let cellStart: [Int32]
    private let order: [Int32]

    static let columns = 360
    static let rows = 180

    var count: Int { names.count }

    /// Parses `name TAB countryCode TAB latitude TAB longitude TAB population` lines (UTF-8).
    init(tsv bytes: [UInt8]) throws(PlaceDataError) {
        var names: [String] = [], codes: [String] = [], latitudes: [Double] = [], longitudes: [Double] = []
        var populations: [Int32] = []
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            defer { start = end + 1 }
            guard end > start else { continue }
            lineNumber += 1
            let fields = bytes[start..<end].split(separator: 0x09, omittingEmptySubsequences: false)
            guard fields.count == 5, !fields[0].isEmpty, let latitude = Self.number(fields[2]), let longitude = Self.number(fields[3]),
                let population = Int32(String(decoding: fields[4], as: UTF8.self)),
                (-90...90).contains(latitude), (-180...180).contains(longitude)
            else { throw PlaceDataError("places line \(lineNumber) is not name, country, latitude, longitude, population") }
            names.append(String(decoding: fields[0], as: UTF8.self))
            codes.append(String(decoding: fields[1], as: UTF8.self))
            latitudes.append(latitude)
            longitudes.append(longitude)
            populations.append(population)
        }
        var cellStart = [Int32](repeating: 0, count: Self.columns * Self.rows + 1)
        let cells = zip(latitudes, longitudes).map { Self.cell(latitude: $0, longitude: $1) }
        for cell in cells { cellStart[cell + 1] += 1 }
        for position in 1..<cellStart.count { cellStart[position] += cellStart[position - 1] }
        var next = cellStart
        var order = [Int32](repeating: 0, count: names.count)
        for (place, cell) in cells.enumerated() {
            order[Int(next[cell])] = Int32(place)
            next[cell] += 1
        }
        self.names = names
        self.countryCodes = codes
        self.latitudes = latitudes
        self.longitudes = longitudes
        self.populations = populations
        self.cellStart = cellStart
        self.order = order
    }

    /// A decimal such as `-33.8678`, without going through a String (loading parses 340,000).
    private static func number(_ bytes: ArraySlice<UInt8>) -> Double? {
        var value = 0.0, scale = 0.0, negative = false, digits = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "-") where digits == 0 && !negative && scale == 0: negative = true
            case UInt8(ascii: ".") where scale == 0: scale = 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = value * 10 + Double(byte - UInt8(ascii: "0"))
                if scale > 0 { scale *= 10 }
                digits += 1
            default: return nil
            }
        }
        guard digits > 0 else { return nil }
        let magnitude = scale > 0 ? value / scale : value
        return negative ? -magnitude : magnitude
    }

    /// The nearest place no farther than `radius` kilometres (great-circle), or nil.
    func nearest(latitude: Double, longitude: Double, within radius: Double) -> Found? {
        best(latitude: latitude, longitude: longitude, within: radius, scanning: false) { $1 < $3 }
    }

    /// The place with the most people no farther than `radius` km (the nearer of equals).
    func mostPopulous(latitude: Double, longitude: Double, within radius: Double) -> Found? {
        best(latitude: latitude, longitude: longitude, within: radius, scanning: false) { $0 > $2 || ($0 == $2 && $1 < $3) }
    }

    /// The same answers by looking at every place: the reference the tests hold the grid to.
    func nearestByScan(latitude: Double, longitude: Double, within radius: Double) -> Found? {
        best(latitude: latitude, longitude: longitude, within: radius, scanning: true) { $1 < $3 }
    }

    func mostPopulousByScan(latitude: Double, longitude: Double, within radius: Double) -> Found? {
        best(latitude: latitude, longitude: longitude, within: radius, scanning: true) { $0 > $2 || ($0 == $2 && $1 < $3) }
    }

    /// The place within `radius` that `better(population, distance, bestPopulation,
    /// bestDistance)` prefers to every other, from the grid's cells or (`scanning`) from all.
    private func best(
        latitude: Double, longitude: Double, within radius: Double, scanning: Bool,
        better: (Int32, Double, Int32, Double) -> Bool
    ) -> Found? {
        var chosen = -1
        var chosenDistance = Double.infinity
        func consider(_ place: Int) {
            let distance = Geodesy.distance(latitude, longitude, latitudes[place], longitudes[place])
            guard distance <= radius else { return }
            if chosen < 0 || better(populations[place], distance, populations[chosen], chosenDistance) {
                chosen = place
                chosenDistance = distance
            }
        }
        if scanning {
            for place in 0..<names.count { consider(place) }
        } else {
            let (rows, columns) = cells(latitude: latitude, longitude: longitude, radius: radius)
            for row in rows {
                for column in columns {
                    let cell = row * Self.columns + column
                    for position in Int(cellStart[cell])..<Int(cellStart[cell + 1]) { consider(Int(order[position])) }
                }
            }
        }
        guard chosen >= 0 else { return nil }
        return Found(
            name: names[chosen], countryCode: countryCodes[chosen], population: Int(populations[chosen]),
            distanceKilometres: chosenDistance)
    }

    /// The rows and columns of the cells a circle of `radius` km around the point can touch.
    private func cells(latitude: Double, longitude: Double, radius: Double) -> (ClosedRange<Int>, [Int]) {
        let degrees = radius / Geodesy.kilometresPerDegree
        let south = max(-90, latitude - degrees), north = min(90, latitude + degrees)
        // A degree of longitude is shortest at the band's edge farthest from the equator.
        let widest = max(abs(south), abs(north))
        let spanDegrees = degrees / cos(min(widest, 89.999) * .pi / 180)
        let rows = Self.row(south)...Self.row(north)
        if spanDegrees >= 180 || north >= 90 || south <= -90 { return (rows, Array(0..<Self.columns)) }
        let west = Int((longitude - spanDegrees + 180).rounded(.down))
        let east = Int((longitude + spanDegrees + 180).rounded(.down))
        return (rows, (west...east).map { (($0 % Self.columns) + Self.columns) % Self.columns })
    }

    private static func row(_ latitude: Double) -> Int { min(rows - 1, max(0, Int((latitude + 90).rounded(.down)))) }

    private static func cell(latitude: Double, longitude: Double) -> Int {
        let column = min(columns - 1, max(0, Int((longitude + 180).rounded(.down))))
        return row(latitude) * columns + column
    }
}

/// Distances on a sphere of the Earth's mean radius: good to about 0.5 %, which is plenty to
/// say which town is nearest.
enum Geodesy {
    static let earthRadius = 6_371.0088
    static let kilometresPerDegree = earthRadius * .pi / 180

    /// Great-circle distance in kilometres (haversine).
    static func distance(_ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (latitude2 - latitude1) * radians
        let dLongitude = (longitude2 - longitude1) * radians
        let a = sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(latitude1 * radians) * cos(latitude2 * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }
}
