/// The offline photo service's world: for any place, a deterministic set of photos. Places are
/// cells of 0.01° (about a kilometre); each cell has no photos (one in eight), a few (1 to 24,
/// two in eight) or many (100 to 5,999, spread over pages; some more than the 4,000 a search
/// serves).
///
/// ```swift
/// let catalogue = DemoCatalogue()
/// catalogue.photoCount(latitude: 48.8584, longitude: 2.2945)   // the same number every time
/// catalogue.photos(latitude: 48.8584, longitude: 2.2945, page: 2, perPage: 21)
/// ```
public struct DemoCatalogue: Sendable {
    /// Changes every place's photos. The default (chosen by a search) gives `vt demo` a
    /// place with none (Point Nemo), places with many, and one past the 4,000 a search serves.
    public var seed: UInt64

    /// Places given an exact number of photos, by cell (see ``setPhotoCount(_:latitude:longitude:)``).
    var fixedCounts: [Int: Int] = [:]

    public init(seed: UInt64 = 1_102) { self.seed = seed }

    /// Gives the place (its 0.01° cell) exactly `count` photos, whatever the seed says: for
    /// tests that need a place of 1, 15, 30 or 5,000 photos.
    public mutating func setPhotoCount(_ count: Int, latitude: Double, longitude: Double) {
        let (row, column) = cell(latitude, longitude)
        fixedCounts[row * 100_000 + column] = max(0, count)
    }

    /// One photo of a place.
    public struct Photo: Hashable, Sendable {
        /// Unique across places: 11 decimal digits.
        public var id: String
        public var title: String
        /// Its position in the place's results, from 0.
        public var index: Int
    }

    /// How many photos the place has.
    public func photoCount(latitude: Double, longitude: Double) -> Int {
        if !fixedCounts.isEmpty {
            let (row, column) = cell(latitude, longitude)
            if let fixed = fixedCounts[row * 100_000 + column] { return fixed }
        }
        let hash = cellHash(latitude, longitude)
        switch hash % 8 {
        case 0: return 0
        case 1, 2: return 1 + Int((hash >> 8) % 24)
        default: return 100 + Int((hash >> 16) % 5_900)
        }
    }

    /// A place whose photo count `wanted` accepts (the `skipping`-th such one after the first),
    /// searched cell by cell in a square of 30 × 30 km from `start`; nil when none is there. For
    /// tests and demos that need a place with no photos, a few, or many.
    public func place(
        where wanted: (Int) -> Bool, skipping: Int = 0, from start: (latitude: Double, longitude: Double) = (10, 20)
    ) -> (latitude: Double, longitude: Double)? {
        var skipped = 0
        for step in 0..<90_000 {
            let latitude = start.latitude + Double(step % 300) / 100
            let longitude = start.longitude + Double(step / 300) / 100
            guard wanted(photoCount(latitude: latitude, longitude: longitude)) else { continue }
            if skipped == skipping { return (latitude, longitude) }
            skipped += 1
        }
        return nil
    }

    /// The photos on one page (1-based), as Flickr pages them; empty past the last page and
    /// past the first 4,000 results, which is all a search serves.
    public func photos(latitude: Double, longitude: Double, page: Int, perPage: Int) -> [Photo] {
        photos(latitude: latitude, longitude: longitude, page: page, perPage: perPage, served: 4_000)
    }

    /// The photos on one page, of the first `served` (a double of another service may serve
    /// more than Flickr's 4,000).
    public func photos(latitude: Double, longitude: Double, page: Int, perPage: Int, served: Int) -> [Photo] {
        let count = min(photoCount(latitude: latitude, longitude: longitude), served)
        let start = (page - 1) * perPage
        guard page >= 1, perPage >= 1, start < count else { return [] }
        let hash = cellHash(latitude, longitude)
        let (cellLatitude, cellLongitude) = cell(latitude, longitude)
        return (start..<min(count, start + perPage)).map { index in
            let id = 10_000_000_000 + Self.mix(hash ^ UInt64(index) &* 0x9E37_79B9_7F4A_7C15) % 89_999_999_999
            let place = "\(Double(cellLatitude) / 100), \(Double(cellLongitude) / 100)"
            return Photo(id: String(id), title: "Demo photo \(index + 1) near \(place)", index: index)
        }
    }

    /// The image of a photo: a PNG whose colours come from the photo's id.
    public func image(photoID: String, width: Int, height: Int) -> [UInt8] {
        var hash = Self.mix(seed ^ UInt64(photoID.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
        let base = (0..<3).map { _ -> Int in
            hash = Self.mix(hash)
            return Int(hash % 200) + 30
        }
        let centre = (Double(width) * Double(hash % 100) / 100, Double(height) * Double((hash >> 8) % 100) / 100)
        let radius = Double(min(width, height)) * (0.2 + Double((hash >> 16) % 20) / 100)
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let dx = Double(x) - centre.0
                let dy = Double(y) - centre.1
                let inside = dx * dx + dy * dy < radius * radius
                for channel in 0..<3 {
                    let shade = base[channel] + (x + y) * 25 / (width + height)
                    pixels.append(UInt8(clamping: inside ? 255 - shade / 2 : shade))
                }
            }
        }
        return PNGImage(width: width, height: height, pixels: pixels).encoded()
    }

    func cell(_ latitude: Double, _ longitude: Double) -> (Int, Int) {
        let lat = latitude.isFinite ? Int((max(-90, min(90, latitude)) * 100).rounded()) : 0
        let lon = longitude.isFinite ? Int((max(-180, min(180, longitude)) * 100).rounded()) : 0
        return (lat, lon)
    }

    func cellHash(_ latitude: Double, _ longitude: Double) -> UInt64 {
        let (lat, lon) = cell(latitude, longitude)
        return Self.mix(seed ^ Self.mix(UInt64(bitPattern: Int64(lat)) &* 0x1_0000_0001 ^ UInt64(bitPattern: Int64(lon))))
    }

    /// SplitMix64's finaliser: a well-mixed 64-bit hash (public so that a double of another
    /// service orders its files the way the catalogue does).
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
