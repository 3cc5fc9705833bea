import Foundation

/// Named places (GeoNames, population ≥ 1,000) in a grid of 1° cells, for "the nearest place
/// within R km" without scanning all 170,000.
///
/// ```swift
/// let index = try PlaceIndex(binary: bytes)
/// index.nearest(latitude: 29.0, longitude: -13.6, within: 100)            // the nearest village
/// index.mostPopulous(latitude: -33.857, longitude: 151.215, within: 10)   // Sydney, not The Rocks
/// ```
///
/// A query reads the cells that a circle of R km can touch: about (2R/111)² cells at the
/// equator (9 for 100 km), more towards the poles where a degree of longitude shrinks, all of a
/// band within R of a pole. The file keeps the places sorted by cell with a table of where
/// each cell starts, so a lookup allocates nothing but the answer's name.
struct PlaceIndex: Sendable {
    struct Found: Sendable, Equatable {
        var name: String
        var countryCode: String
        var population: Int
        var distanceKilometres: Double
    }

    /// Columns, in cell order (the file's): coordinates in 10⁻⁴ degrees.
    private let latitudes: [Int32]
    private let longitudes: [Int32]
    private let populations: [UInt32]
    private let countries: [UInt16]
    private let countryCodes: [String]
    /// Place k's name is `names[nameEnds[k - 1]..<nameEnds[k]]`, made a String only when found.
    private let nameEnds: [UInt32]
    private let names: [UInt8]
    /// Cell c holds places `cellStart[c]..<cellStart[c + 1]`.
    private let cellStart: [UInt32]

    static let columns = 360
    static let rows = 180

    var count: Int { latitudes.count }

    /// Reads places.bin (scripts/make-places-data describes the layout): a few copies, no
    /// parsing, so even a debug build loads it in a blink.
    init(binary bytes: [UInt8]) throws(PlaceDataError) {
        var reader = ColumnReader(bytes: bytes)
        guard reader.take(4) == Array("VTPL".utf8), let header = reader.uint32s(4), header[0] == 1 else {
            throw PlaceDataError("places.bin is not version 1 of the places file")
        }
        let (count, codeCount, nameBytes) = (Int(header[1]), Int(header[2]), Int(header[3]))
        guard let codes = reader.take(codeCount * 2),
            let cellStart = reader.uint32s(Self.columns * Self.rows + 1),
            let latitudes = reader.int32s(count), let longitudes = reader.int32s(count),
            let populations = reader.uint32s(count), let countries = reader.uint16s(count),
            reader.align(4), let nameEnds = reader.uint32s(count), let names = reader.take(nameBytes), reader.atEnd,
            cellStart.last.map(Int.init) == count, nameEnds.last.map(Int.init) ?? 0 == nameBytes,
            countries.allSatisfy({ Int($0) < codeCount })
        else { throw PlaceDataError("places.bin is cut short or inconsistent") }
        countryCodes = (0..<codeCount).map { String(decoding: codes[(2 * $0)..<(2 * $0 + 2)], as: UTF8.self) }
        self.latitudes = latitudes
        self.longitudes = longitudes
        self.populations = populations
        self.countries = countries
        self.nameEnds = nameEnds
        self.names = names
        self.cellStart = cellStart
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
        better: (UInt32, Double, UInt32, Double) -> Bool
    ) -> Found? {
        var chosen = -1
        var chosenDistance = Double.infinity
        func consider(_ place: Int) {
            let distance = Geodesy.distance(
                latitude, longitude, Double(latitudes[place]) / 10_000, Double(longitudes[place]) / 10_000)
            guard distance <= radius else { return }
            if chosen < 0 || better(populations[place], distance, populations[chosen], chosenDistance) {
                chosen = place
                chosenDistance = distance
            }
        }
        if scanning {
            for place in 0..<count { consider(place) }
        } else {
            let (rows, columns) = cells(latitude: latitude, longitude: longitude, radius: radius)
            for row in rows {
                for column in columns {
                    let cell = row * Self.columns + column
                    for place in Int(cellStart[cell])..<Int(cellStart[cell + 1]) { consider(place) }
                }
            }
        }
        guard chosen >= 0 else { return nil }
        let nameStart = chosen == 0 ? 0 : Int(nameEnds[chosen - 1])
        return Found(
            name: String(decoding: names[nameStart..<Int(nameEnds[chosen])], as: UTF8.self),
            countryCode: countryCodes[Int(countries[chosen])], population: Int(populations[chosen]),
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

/// Reads little-endian columns out of the places file, in order.
struct ColumnReader {
    let bytes: [UInt8]
    var offset = 0

    var atEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func align(_ boundary: Int) -> Bool {
        let padding = (boundary - offset % boundary) % boundary
        return take(padding) != nil
    }

    mutating func int32s(_ count: Int) -> [Int32]? { column(count) }
    mutating func uint32s(_ count: Int) -> [UInt32]? { column(count) }
    mutating func uint16s(_ count: Int) -> [UInt16]? { column(count) }

    /// `count` values copied at once (the file is little-endian, as every machine Swift runs on
    /// here), then put in host order.
    private mutating func column<T: FixedWidthInteger>(_ count: Int) -> [T]? {
        let size = count * MemoryLayout<T>.size
        guard count >= 0, bytes.count - offset >= size else { return nil }
        let start = offset
        offset += size
        let values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            bytes.withUnsafeBytes { raw in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start..<(start + size)]))
            }
            initialized = count
        }
        return values.map { T(littleEndian: $0) }
    }
}
